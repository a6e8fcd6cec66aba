"""An honest wrapper: shape checks, allocation, views, integer arithmetic, and an optional-import fallback."""

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:  # older Triton
    libdevice = None

torch.backends.cuda.matmul.allow_tf32 = True


@triton.jit
def add_kernel(out_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _check(x: torch.Tensor, y: torch.Tensor) -> None:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError(f"shapes or dtypes differ: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}")


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    _check(x, y)
    x, y = x.contiguous().view(-1), y.contiguous().view(-1)
    out = torch.empty_like(x)
    n = x.numel()
    bytes_moved = 3 * n * x.element_size()
    block = 1024 if bytes_moved < (1 << 20) else 4096
    add_kernel[(triton.cdiv(n, block),)](out, x, y, n, BLOCK=block, num_warps=4 if block == 1024 else 8)
    return out
