"""Vector add copied from a tutorial, with the mask dropped and a floor-divided grid."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # planted: int32_offset_overflow
    x = tl.load(x_ptr + offs)  # planted: unmasked_access
    y = tl.load(y_ptr + offs)  # planted: unmasked_access
    tl.store(out_ptr + offs, x + y)  # planted: unmasked_access


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024)  # planted: grid_floor_division
    return out
