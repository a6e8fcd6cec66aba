# label: good (the masked twin, under an alias)
import torch
import triton

from scalepkg.kernels import scale_masked_kernel as scale_kernel


def scale(x: torch.Tensor, s: float = 2.0) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 256
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, s, BLOCK=BLOCK)
    return y
