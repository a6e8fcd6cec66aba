# Audit harness for tests/audit_public_corpus/sageattention/quant_per_block_varlen.py: per_block_int8(q, k,
# cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, BLKQ=128, BLKK=64, sm_scale=None) -> (q_int8, q_scale,
# k_int8, k_scale, cu_seqlens_q_scale, cu_seqlens_k_scale), sageattn_varlen's quantization: q [total_q, h_qo,
# head_dim] and k [total_k, h_kv, head_dim] packed sequences (cu_seqlens int32 prefix sums, max_seqlen >= every
# length), each sequence and head quantized to int8 per block of BLKQ (BLKK) tokens as in quant_per_block.py (q times
# sm_scale * log2(e), sm_scale defaulting to head_dim ** -0.5; scale = absmax / 127; round half away from zero);
# scales [sum of the sequences' block counts, h, 1], cu_seqlens_*_scale the prefix sums of those block counts (int64).
# head_dim 64 or 128 (core.py sends no other here). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "per_block_int8"
AUDIT_SHAPE = (3, 150, 2, 64)  # 3 sequences of up to 150 tokens, 2 heads, head_dim 64


def make_inputs(case):
    b, n, h, d = case.shape
    lens = case.randint(1, n + 1, (b,), dtype=torch.int32)
    cu = torch.cat([torch.zeros(1, dtype=torch.int32, device=lens.device), lens.cumsum(0).to(torch.int32)])
    total = int(cu[-1])
    return (case.randn(total, h, d), case.randn(total, h, d), cu, cu.clone(), n, n)


def _quant(x, cu, blk, mult):
    outs, scales = [], []
    for s, e in zip(cu.tolist(), cu.tolist()[1:]):
        seq = x[s:e].float().transpose(0, 1) * mult  # [h, len, d]
        nb = (e - s + blk - 1) // blk
        xp = torch.nn.functional.pad(seq, (0, 0, 0, nb * blk - (e - s))).reshape(seq.shape[0], nb, blk * seq.shape[2])
        sc = xp.abs().amax(-1) / 127.0  # [h, nb]
        y = xp / sc[..., None]
        y = (y + 0.5 * torch.where(y >= 0, 1.0, -1.0)).trunc().to(torch.int8)
        outs.append(y.reshape(seq.shape[0], nb * blk, -1)[:, : e - s].transpose(0, 1))
        scales.append(sc.T[..., None])
    q8 = torch.cat(outs) if outs else torch.empty(x.shape, dtype=torch.int8)
    sc = torch.cat(scales) if scales else torch.empty(0, x.shape[1], 1)
    nbs = torch.tensor([t.shape[0] for t in scales], dtype=torch.int64)
    return q8, sc, torch.nn.functional.pad(torch.cumsum(nbs, 0), (1, 0))


def reference(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, BLKQ=128, BLKK=64, sm_scale=None):
    lens = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]).tolist() + (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).tolist()
    if q.shape[-1] not in (64, 128) or any(n < 0 for n in lens) or max(lens, default=0) > min(max_seqlen_q,
                                                                                              max_seqlen_k):
        raise ValueError("head_dim 64 or 128; cu_seqlens of lengths <= max_seqlen")
    if sm_scale is None:
        sm_scale = q.shape[-1] ** -0.5
    q8, qs, cqs = _quant(q, cu_seqlens_q, BLKQ, sm_scale * 1.44269504)
    k8, ks, cks = _quant(k, cu_seqlens_k, BLKK, 1.0)
    return q8, qs, k8, ks, cqs, cks
