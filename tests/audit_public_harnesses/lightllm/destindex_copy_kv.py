# Audit harness for tests/audit_public_corpus/lightllm/destindex_copy_kv.py: destindex_copy_quantize_kv(K, DestLoc,
# Out, Out_scale), in place: for each token i, Out[DestLoc[i]] = int8(K[i] / s) and Out_scale[DestLoc[i]] = s with s =
# max|K[i, h, :]| / 127 per head (K [tokens, heads, head_dim], Out [cache, heads, head_dim] int8, Out_scale
# [cache, heads, 1]); DestLoc holds distinct cache slots (lightllm's KV-cache allocator). The file imports only torch
# and triton: no stand-in.
import torch

ENTRY = "destindex_copy_quantize_kv"
AUDIT_SHAPE = (5, 4, 32)  # 5 tokens, 4 heads, head_dim 32, into a 16-slot cache
SLOTS = 16


def make_inputs(case):
    n, h, d = case.shape
    g = torch.Generator().manual_seed(case.seed)
    dest = torch.randperm(max(SLOTS, n), generator=g)[:n].to(case.device, torch.int64)
    out = torch.zeros(max(SLOTS, n), h, d, dtype=torch.int8, device=case.device)
    scale = torch.zeros(max(SLOTS, n), h, 1, dtype=case.dtype, device=case.device)
    return (case.randn(n, h, d), dest, out, scale)


def reference(K, DestLoc, Out, Out_scale):
    k = K.float()
    s = k.abs().amax(dim=-1, keepdim=True) / 127.0
    Out[DestLoc] = (k / s).to(torch.int8)
    Out_scale[DestLoc] = s.to(Out_scale.dtype)
