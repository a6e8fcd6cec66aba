# Audit harness for tests/audit_public_corpus/fastvideo/fused_compress_topk.py: fused_topk_mask(scores, topk) -> mask,
# bool [B, H, q_blocks, kv_blocks] with min(topk, kv_blocks) True per row: every score above the row's topk-th largest
# and, of the scores equal to it, the first ones in kv order (the kernel's tie rule). Called as fastvideo-kernel's
# video_sparse_attn calls it: scores = q_c @ k_c^T / sqrt(d) of the block means (in q's dtype; O(1) values, no -inf),
# topk = compute_topk(sparsity, kv_blocks) = ceil((1 - sparsity) * kv_blocks). The file's other entry,
# fused_block_mean, is not probed. The file imports only torch and triton: no stand-in.
import math

import torch

ENTRY = "fused_topk_mask"
AUDIT_SHAPE = (1, 2, 6, 12)  # batch, heads, q blocks, kv blocks


def make_inputs(case):
    b, h, nq, nkv = case.shape
    d = 64
    qc, kc = case.randn(b, h, nq, d), case.randn(b, h, nkv, d)
    scores = torch.matmul(qc, kc.transpose(-2, -1)) / math.sqrt(d)
    return (scores, max(1, min(math.ceil((1 - 0.75) * nkv), nkv)))  # VSA_sparsity 0.75


def reference(scores, topk):
    nkv = scores.shape[-1]
    k = min(topk, nkv)
    s = scores.float()
    kth = s.topk(k, dim=-1).values[..., -1:] if k else s[..., :1] + float("inf")
    above = s > kth
    at = s == kth
    need = k - above.sum(-1, keepdim=True)
    return above | (at & (at.int().cumsum(-1) <= need))
