"""Correct: per-program partial sums of squares, one program adds the partials (a fixed order: deterministic), then
a scaling pass. Works on a contiguous copy."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_partials_kernel(x_ptr, part_ptr, n_elements, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = pid * CHUNK + i + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
        acc += x * x
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def sum_partials_kernel(part_ptr, norm_ptr, n_parts, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, n_parts, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0)
    tl.store(norm_ptr, tl.sqrt(tl.sum(acc, axis=0)))


@triton.jit
def scale_kernel(x_ptr, norm_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    norm = tl.load(norm_ptr)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) / norm, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            chunk = 16384
            n_parts = triton.cdiv(n, chunk)
            part = torch.empty(n_parts, dtype=torch.float32, device=x.device)
            norm = torch.empty(1, dtype=torch.float32, device=x.device)
            sumsq_partials_kernel[(n_parts,)](x, part, n, CHUNK=chunk, BLOCK=1024)
            sum_partials_kernel[(1,)](part, norm, n_parts, BLOCK=1024)
            scale_kernel[(triton.cdiv(n, 1024),)](x, norm, out, n, BLOCK=1024)
        return out
