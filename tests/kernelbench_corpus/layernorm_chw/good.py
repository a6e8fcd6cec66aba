"""Correct: LayerNorm over (C, H, W) in two passes split across programs: per-chunk partial sums, then each chunk
normalizes with its row's totals. Deterministic (no atomics); any input layout (made contiguous first)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_partials_kernel(x_ptr, part_ptr, L, n_chunks, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = chunk * CHUNK + i + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * L + offs, mask=offs < L, other=0.0)
        s += x
        sq += x * x
    tl.store(part_ptr + (row * n_chunks + chunk) * 2, tl.sum(s, axis=0))
    tl.store(part_ptr + (row * n_chunks + chunk) * 2 + 1, tl.sum(sq, axis=0))


@triton.jit
def ln_apply_kernel(x_ptr, w_ptr, b_ptr, part_ptr, out_ptr, L, n_chunks, eps, CHUNK: tl.constexpr,
                    BLOCK: tl.constexpr, BLOCK_P: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    p = tl.arange(0, BLOCK_P)
    pm = p < n_chunks
    total = tl.sum(tl.load(part_ptr + (row * n_chunks + p) * 2, mask=pm, other=0.0), axis=0)
    total_sq = tl.sum(tl.load(part_ptr + (row * n_chunks + p) * 2 + 1, mask=pm, other=0.0), axis=0)
    mean = total / L
    rstd = 1.0 / tl.sqrt(tl.maximum(total_sq / L - mean * mean, 0.0) + eps)
    for i in range(0, CHUNK, BLOCK):
        offs = chunk * CHUNK + i + tl.arange(0, BLOCK)
        mask = offs < L
        x = tl.load(x_ptr + row * L + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + row * L + offs, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():  # the reference's initialization, in the same order (same seed, same weights)
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nd = len(self.ln.normalized_shape)
        x = x.contiguous()
        L = 1
        for s in x.shape[x.dim() - nd:]:
            L *= s
        rows = x.numel() // L if L else 0
        out = torch.empty_like(x)
        if out.numel():
            chunk, block = 4096, 1024
            n_chunks = triton.cdiv(L, chunk)
            part = torch.empty((rows, n_chunks, 2), dtype=torch.float32, device=x.device)
            ln_partials_kernel[(rows, n_chunks)](x, part, L, n_chunks, CHUNK=chunk, BLOCK=block)
            ln_apply_kernel[(rows, n_chunks)](x, self.ln.weight.contiguous(), self.ln.bias.contiguous(), part, out, L,
                                              n_chunks, self.ln.eps, CHUNK=chunk, BLOCK=block,
                                              BLOCK_P=triton.next_power_of_2(n_chunks))
        return out
