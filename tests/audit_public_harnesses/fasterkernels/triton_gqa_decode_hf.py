# Audit harness for tests/audit_public_corpus/fasterkernels/triton_gqa_decode_hf.py (fasterkernels' fskernels/triton/
# triton_gqa_decode_hf.py): flash_decode_gqa_hf_dense_optimized(q, k_cache, v_cache, cache_lens, start_k_offsets=None,
# num_splits=None) -> [B, Q_H, D]: one decode step of grouped-query attention over a dense [B, KV_H, S, D] cache, the
# first cache_lens[b] positions of each row, split over num_splits KV chunks (partial outputs in module-level buffers,
# then a reduction kernel) when num_splits > 1. Called as the package's CUDA-graph decode path calls it
# (engine.CUDAGraphRunner.build -> set_num_splits(8), then the patched HF attention,
# custom_hf_decode_attention_forward, calls it with q.squeeze(2), the layer's key/value cache states and cache_lens =
# cache_position[-1] + 1 for every row): q [B, Q_H, D] fp16, k/v [B, KV_H, S, D] fp16 (a static cache, contiguous),
# cache_lens int32 [B], num_splits 8 (the runner's default) passed explicitly. The file's __main__ block calls it with
# B 2, Q_H 32, KV_H 8, S 8192, D 128, lens S - 100; here B 2, Q_H 8, KV_H 2, S 320, D 128, lens S - 100 (cut for the
# interpreter). The reference is the attention over the first cache_lens[b] positions in float64.
# Stand-in: the file imports transformers.models.qwen3.modeling_qwen3.eager_attention_forward at module level (used
# only by custom_hf_decode_attention_forward's fallback for prefill); transformers is not installed here, so a stand-in
# module provides that name (raising if ever called) unless a real transformers is importable.
import importlib.util
import math
import sys
import types

import torch

if importlib.util.find_spec("transformers") is None:
    def _eager_attention_forward(*args, **kwargs):
        raise RuntimeError("stand-in: transformers is not installed (prefill fallback)")

    for _n in ("transformers", "transformers.models", "transformers.models.qwen3",
               "transformers.models.qwen3.modeling_qwen3"):
        sys.modules.setdefault(_n, types.ModuleType(_n))
    sys.modules["transformers.models.qwen3.modeling_qwen3"].eager_attention_forward = _eager_attention_forward

ENTRY = "flash_decode_gqa_hf_dense_optimized"
AUDIT_SHAPE = (2, 8, 2, 320, 128)  # batch, query heads, KV heads, cache positions S, head_dim
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp16 partial outputs, fp32 reduction
NUM_SPLITS = 8  # engine.CUDAGraphRunner's default


def make_inputs(case):
    b, hq, hk, s, d = case.shape
    q = case.randn(b, hq, d, dtype=torch.float16)
    k = case.randn(b, hk, s, d, dtype=torch.float16)
    v = case.randn(b, hk, s, d, dtype=torch.float16)
    lens = torch.full((b,), max(1, s - 100), dtype=torch.int32, device=q.device)
    return (q, k, v, lens, None, NUM_SPLITS)


def reference(q, k_cache, v_cache, cache_lens, start_k_offsets=None, num_splits=None):
    b, hq, d = q.shape
    hk = k_cache.shape[1]
    if hq % hk or k_cache.shape != v_cache.shape or cache_lens.numel() != b:
        raise ValueError("q [B, Q_H, D], caches [B, KV_H, S, D] with Q_H % KV_H == 0, cache_lens [B]")
    out = torch.empty(b, hq, d, dtype=torch.float64, device=q.device)
    for i in range(b):
        lo = int(start_k_offsets[i]) if start_k_offsets is not None else 0
        hi = int(cache_lens[i])
        kk = k_cache[i, :, lo:hi].double().repeat_interleave(hq // hk, dim=0)  # [Q_H, T, D]
        vv = v_cache[i, :, lo:hi].double().repeat_interleave(hq // hk, dim=0)
        p = torch.softmax(torch.einsum("hd,htd->ht", q[i].double(), kk) / math.sqrt(d), dim=-1)
        out[i] = torch.einsum("ht,htd->hd", p, vv)
    return out.to(q.dtype)
