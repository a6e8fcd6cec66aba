"""A two-kernel split reduction: small per-program partials, then one program sums them in order."""

import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(part_ptr, x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(out_ptr, part_ptr, n_parts, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, n_parts, BLOCK):
        acc += tl.load(part_ptr + p0 + offs, mask=p0 + offs < n_parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_parts = triton.cdiv(x.numel(), 4096)
    parts = torch.empty((n_parts,), device=x.device, dtype=torch.float32)
    out = torch.empty((), device=x.device, dtype=torch.float32)
    partial_sum_kernel[(n_parts,)](parts, x, x.numel(), BLOCK=4096, num_warps=8)
    final_sum_kernel[(1,)](out, parts, n_parts, BLOCK=1024)
    return out
