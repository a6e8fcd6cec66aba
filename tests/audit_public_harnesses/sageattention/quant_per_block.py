# Audit harness for tests/audit_public_corpus/sageattention/quant_per_block.py: per_block_int8(q, k, BLKQ=128,
# BLKK=64, sm_scale=None, tensor_layout="HND") -> (q_int8, q_scale, k_int8, k_scale): q [b, h_qo, qo_len, head_dim]
# and k [b, h_kv, kv_len, head_dim] (HND) quantized to int8 per block of BLKQ (BLKK) tokens of one head: q is first
# multiplied by sm_scale * log2(e) (sm_scale defaults to head_dim ** -0.5), scale = absmax / 127 per block, int8 =
# round-half-away(x / scale); scales of shape [b, h, ceil(len / BLK), 1] in float32. Its caller, sageattn (core.py),
# sends head_dim 96 to quant_per_block_hd96, so this file takes head_dim 64 or 128. The file imports only torch and
# triton: no stand-in.
import torch

ENTRY = "per_block_int8"
AUDIT_SHAPE = (1, 2, 150, 64)  # batch 1, 2 heads, 150 tokens (2 q blocks of 128, 3 k blocks of 64), head_dim 64


def make_inputs(case):
    b, h, n, d = case.shape
    return (case.randn(b, h, n, d), case.randn(b, h, n, d))


def _quant(x, blk, mult):
    b, h, n, d = x.shape
    nb = (n + blk - 1) // blk
    xp = torch.nn.functional.pad(x.float() * mult, (0, 0, 0, nb * blk - n)).reshape(b, h, nb, blk * d)
    scale = xp.abs().amax(-1, keepdim=True) / 127.0
    y = xp / scale
    y = (y + 0.5 * torch.where(y >= 0, 1.0, -1.0)).trunc().to(torch.int8)
    return y.reshape(b, h, nb * blk, d)[:, :, :n], scale


def reference(q, k, BLKQ=128, BLKK=64, sm_scale=None, tensor_layout="HND"):
    if tensor_layout != "HND" or q.shape[-1] not in (64, 128):
        raise ValueError("head_dim 64 or 128 (96 has its own file), HND")
    if sm_scale is None:
        sm_scale = q.shape[-1] ** -0.5
    q8, qs = _quant(q, BLKQ, sm_scale * 1.44269504)
    k8, ks = _quant(k, BLKK, 1.0)
    return q8, qs, k8, ks
