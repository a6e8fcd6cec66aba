"""Per-batch scaling whose kernel reads program_id(1) for the batch, launched on a 1-D grid."""

import torch
import triton
import triton.language as tl


@triton.jit
def batch_scale_kernel(out_ptr, x_ptr, scale_ptr, n_per_batch, BLOCK: tl.constexpr):
    batch = tl.program_id(1).to(tl.int64)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_per_batch
    s = tl.load(scale_ptr + batch)
    x = tl.load(x_ptr + batch * n_per_batch + offs, mask=mask, other=0.0)
    tl.store(out_ptr + batch * n_per_batch + offs, x * s, mask=mask)


def batch_scale(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    per = x[0].numel()
    batch_scale_kernel[(triton.cdiv(per, 1024),)](out, x, scale.contiguous(), per, BLOCK=1024)  # planted: grid_axis_mismatch
    return out
