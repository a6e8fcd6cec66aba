"""PLANTED BUG (race): every program adds its sum of squares into one scalar with load-add-store instead of
tl.atomic_add, so on a GPU concurrent programs lose each other's contributions (the norm comes out too small, and
different each run). Triton's interpreter runs programs one after another, where the race cannot happen."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_into_scalar_kernel(x_ptr, total_ptr, n_elements, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = pid * CHUNK + i + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
        acc += x * x
    old = tl.load(total_ptr)
    tl.store(total_ptr, old + tl.sum(acc, axis=0))  # the race: read-modify-write of one shared scalar


@triton.jit
def scale_kernel(x_ptr, total_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    norm = tl.sqrt(tl.load(total_ptr))
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
            total = torch.zeros(1, dtype=torch.float32, device=x.device)
            sumsq_into_scalar_kernel[(triton.cdiv(n, chunk),)](x, total, n, CHUNK=chunk, BLOCK=1024)
            scale_kernel[(triton.cdiv(n, 1024),)](x, total, out, n, BLOCK=1024)
        return out
