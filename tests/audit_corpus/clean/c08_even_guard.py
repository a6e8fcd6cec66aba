"""An unmasked fast path taken only when a constexpr says the size divides the block."""

import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def relu_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0))
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def relu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    relu_kernel[(triton.cdiv(x.numel(), 1024),)](y, x, x.numel(), BLOCK=1024)
    return y
