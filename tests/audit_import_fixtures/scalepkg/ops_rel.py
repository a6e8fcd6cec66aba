# label: bad sizes (static only: a relative import, which the worker cannot load as a lone file)
import torch
import triton

from .kernels import scale_kernel


def scale(x: torch.Tensor, s: float = 2.0) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 256
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, s, BLOCK=BLOCK)
    return y
