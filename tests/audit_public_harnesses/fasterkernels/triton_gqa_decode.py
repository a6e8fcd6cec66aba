# Audit harness for tests/audit_public_corpus/fasterkernels/triton_gqa_decode.py (fasterkernels' fskernels/triton/
# triton_gqa_decode.py): flash_decode_gqa_varlen(q, k_varlen, v_varlen, cu_seqlens_k, s_aux=None) -> [B, Q_H, D]: one
# decode step of grouped-query attention over packed (varlen) key/value tokens, one program per (sequence, KV head)
# holding the head group's queries, scale 1 / sqrt(D); s_aux the optional per-head attention-sink logits (GPT-OSS).
# Called as the package's varlen decode test and benchmark call it (the tilelang twin's test_varlen_decode_main): q
# [B, Q_H, D] fp16, k/v [total tokens, KV_H, D] fp16 packed by sequence, cu_seqlens_k int32 [B + 1] (from 0), sequences
# of 25-100% of the longest; no sinks in the example (s_aux None, the default). Llama-3's head_dim 128 and 4 query heads
# per KV head; 3 sequences of up to 96 tokens. The reference is the attention in float64 (with a sink, the package's
# own ref_attention semantics: the sink logit adds exp(sink - max) to the denominator). The file imports only torch
# and triton: no stand-in.
import math

import torch

ENTRY = "flash_decode_gqa_varlen"
AUDIT_SHAPE = (3, 8, 2, 96, 128)  # sequences B, query heads, KV heads, longest sequence, head_dim
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp16 P @ V with fp32 accumulation


def make_inputs(case):
    b, hq, hk, s, d = case.shape
    lens = case.randint(max(1, s // 4), s + 1, (b,))
    lens[0] = s
    cu = torch.zeros(b + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lens, 0).to(torch.int32)
    total = int(cu[-1])
    q = case.randn(b, hq, d, dtype=torch.float16)
    k = case.randn(total, hk, d, dtype=torch.float16)
    v = case.randn(total, hk, d, dtype=torch.float16)
    return (q, k, v, cu.to(q.device))


def reference(q, k_varlen, v_varlen, cu_seqlens_k, s_aux=None):
    b, hq, d = q.shape
    hk = k_varlen.shape[1]
    if hq % hk or k_varlen.shape != v_varlen.shape or cu_seqlens_k.numel() != b + 1:
        raise ValueError("q [B, Q_H, D], k/v [T, KV_H, D] with Q_H % KV_H == 0, cu_seqlens_k [B + 1]")
    out = torch.empty(b, hq, d, dtype=torch.float64, device=q.device)
    for i in range(b):
        lo, hi = int(cu_seqlens_k[i]), int(cu_seqlens_k[i + 1])
        kk = k_varlen[lo:hi].double().repeat_interleave(hq // hk, dim=1)  # [T, Q_H, D]
        vv = v_varlen[lo:hi].double().repeat_interleave(hq // hk, dim=1)
        s = torch.einsum("hd,thd->ht", q[i].double(), kk) / math.sqrt(d)
        m = s.max(dim=-1, keepdim=True).values
        if s_aux is not None:
            m = torch.maximum(m, s_aux.double()[:, None])
        p = torch.exp(s - m)
        den = p.sum(-1, keepdim=True)
        if s_aux is not None:
            den = den + torch.exp(s_aux.double()[:, None] - m)
        out[i] = torch.einsum("ht,thd->hd", p / den, vv)
    return out.to(q.dtype)
