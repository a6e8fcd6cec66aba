# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def geglu_kernel(x_ptr, out_ptr, n_rows, half, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < half
    a = tl.load(x_ptr + row * 2 * half + cols, mask=mask, other=0.0)
    g = tl.load(x_ptr + row * 2 * half + half + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * half + cols, a * g, mask=mask)


def geglu(x: torch.Tensor) -> torch.Tensor:
    """x[..., :d] * x[..., d:] for an even last dim 2d (an odd one is outside what the op means)."""
    x = x.contiguous()
    m, n = x.shape
    half = n // 2
    out = torch.empty(m, half, device=x.device, dtype=x.dtype)
    geglu_kernel[(m,)](x, out, m, half, BLOCK=triton.next_power_of_2(half))
    return out
