# Audit harness for tests/audit_public_corpus/minference/block_sparse_flash_attention.py: block_sparse_attention(query,
# key, value, top_k, block_size_M=64, block_size_N=64) -> o [b, h, n, d], MInference's "block_sparse" prefill pattern:
# q, k, v are zero-padded along the sequence to a multiple of 64 (a full extra block when n is already a multiple),
# each 64-row query block keeps the top_k 64-key blocks by pooled score (mean of the block's q rows . mean of the
# block's k rows, causal blocks only, `_build_block_index`), and the kernel runs causal softmax(q k^T / sqrt(d)) v over
# the kept blocks only. Called as minference_forward.minference_prefill_kernel's `block_sparse_kernel` calls it for a
# head whose searched pattern is block_sparse: q, k, v the head's slice `query_states[:, head, :, :].unsqueeze(1)`
# ([bsz, 1, q_len, head_dim], a strided view of the layer's [bsz, heads, q_len, head_dim] states, fp16 or bf16 models,
# head_dim 128 in every model config MInference ships), top_k = 100, the default block sizes; bsz is the model's batch
# (1 in every example and benchmark of the package). The file imports only torch, triton and numpy: no stand-in.
import math

import torch

ENTRY = "block_sparse_attention"
AUDIT_SHAPE = (1, 2, 200, 128)  # bsz, heads (the caller's slice has 1; 2 here: the kernel is per (batch, head)), q_len, d
TOLERANCES = {"float16": (1e-2, 1e-2)}  # q * scale and P are rounded to fp16 before their dots, as in FlashAttention


def make_inputs(case):
    b, h, n, d = case.shape
    states = [case.randn(b, h + 1, n, d).to(torch.float16) for _ in range(3)]
    q, k, v = (s[:, 1:] for s in states)  # a head slice of the layer's states: strided, as the caller's
    return (q, k, v, 100)


def _block_index(q, k, top_k, bm, bn):  # the package's own PyTorch selection (_build_block_index), on padded q, k
    b, h, n, d = q.shape
    qp = q.reshape(b, h, -1, bm, d).mean(dim=-2)
    kp = k.reshape(b, h, -1, bn, d).mean(dim=-2)
    am = torch.arange(qp.shape[-2], dtype=torch.int32, device=q.device) * bm
    an = torch.arange(kp.shape[-2], dtype=torch.int32, device=q.device) * bn
    p = torch.einsum("bhmk, bhnk -> bhmn", qp, kp)
    p = p.where(am[None, None, :, None] >= an[None, None, None, :], -torch.inf)
    return torch.topk(p, min(top_k, n // bn), dim=-1).indices.sort(dim=-1).values


def reference(query, key, value, top_k, block_size_M=64, block_size_N=64):
    b, h, n, d = query.shape
    if d not in (16, 32, 64, 128) or block_size_M != block_size_N:
        raise ValueError("head_dim must be 16, 32, 64 or 128 and the two block sizes equal")
    if n == 0:
        return query.clone()
    pad = block_size_M - (n & (block_size_M - 1))
    q, k, v = (torch.nn.functional.pad(t, [0, 0, 0, pad]) for t in (query, key, value))
    npad = n + pad
    idx = _block_index(q, k, top_k, block_size_M, block_size_N)  # [b, h, rows, top_k]
    rows = torch.arange(npad, device=q.device)
    kept = torch.zeros(b, h, npad // block_size_M, npad // block_size_N, dtype=torch.bool, device=q.device)
    for r in range(kept.shape[2]):
        count = min((r + 1) * block_size_M // block_size_N, idx.shape[-1])  # the kernel's block_count
        kept[:, :, r].scatter_(-1, idx[:, :, r, :count], True)
    allow = kept.repeat_interleave(block_size_M, 2).repeat_interleave(block_size_N, 3)
    allow = allow & (rows[None, :] <= rows[:, None])  # causal
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(d)
    o = torch.softmax(s.masked_fill(~allow, float("-inf")), dim=-1) @ v.double()
    return o[:, :, :n].to(query.dtype)
