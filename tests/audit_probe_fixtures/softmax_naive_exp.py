# label: robust magnitude
"""Row softmax as exp(x) / sum(exp(x)) without subtracting the row max: right at the example's values, inf / inf = NaN
once the values are x100. Extreme magnitudes are robustness (run_validation's kind "extreme"): a robustness finding,
a P0 only with `[audit] require = ["extreme"]` (issue 35)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, stride_o, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x)
    tl.store(out_ptr + row * stride_o + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.stride(-1) == 1
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
