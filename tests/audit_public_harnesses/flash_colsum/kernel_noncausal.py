# Audit harness for tests/audit_public_corpus/flash_colsum/kernel_noncausal.py: _flash_colsum_non_batched(Q, K,
# scale, CLS_N) -> [1, S] fp16, the attention column means softmax(Q K^T * scale) averaged over the heads and over the
# query rows (all rows when CLS_N == -1, the first CLS_N otherwise), without the S x S matrix. Called as flash-colsum's
# public flash_colsum(query, key, scale=None, cls_len=None) calls it for a batch of one (ops.py: B == 1 goes here,
# scale = 1 / sqrt(D), CLS_N = -1 or cls_len): the README's "non-causal (ViT, BERT...)" and "CLIP-style, first position
# is CLS" uses, i.e. the q and k of a ViT layer, [1, H, S, D] fp16 (the kernel casts its loads to fp16). Here a CLIP
# ViT-B/16 layer at 224 px: S = 197 (196 patches + CLS), head_dim 64 (12 heads; 2 here), cls_len None. The package's
# origin, SparseVILA, scores visual tokens of a SigLIP tower (729 tokens at 384 px, head_dim 72). The file imports
# only torch and triton: no stand-in.
import torch

ENTRY = "_flash_colsum_non_batched"
AUDIT_SHAPE = (2, 197, 64)  # heads, tokens (CLIP ViT-B/16: 196 patches + CLS), head_dim
TOLERANCES = {"float16": (2e-3, 2e-5)}  # fp32 softmax and sums, one fp16 rounding of a mean ~1/S


def make_inputs(case):
    h, s, d = case.shape
    q = case.randn(1, h, s, d, dtype=torch.float16)
    k = case.randn(1, h, s, d, dtype=torch.float16)
    return (q, k, 1.0 / d ** 0.5, -1)


def reference(Q, K, scale, CLS_N=-1):
    if Q.ndim != 4 or Q.shape != K.shape or Q.shape[0] != 1:
        raise ValueError("Q and K [1, H, S, D] of one shape")
    w = torch.softmax(Q.double() @ K.double().transpose(-2, -1) * scale, dim=-1)
    if CLS_N != -1:
        w = w[:, :, :CLS_N]
    return w.mean(-2).mean(1).to(torch.float16)
