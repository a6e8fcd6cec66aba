# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(x_ptr, out_ptr, stride_x, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)  # row stride honoured, columns unit-stride
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=mask)


def scale_rows(x: torch.Tensor) -> torch.Tensor:
    """2x, for rows of any stride whose last dim is unit-stride (Triton's usual contract; a transposed view is not)."""
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=x.dtype)
    scale_rows_kernel[(m,)](x, out, x.stride(0), n, BLOCK=triton.next_power_of_2(n))
    return out
