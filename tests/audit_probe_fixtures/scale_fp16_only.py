# label: good
# y = 2 * x for float16 x only: the wrapper asserts the dtype. The harness makes inputs in case.dtype and names none,
# so without the contract the example ran in float32 and the entry's own assert was reported as a crash (a false P0);
# the contract read from the wrapper ("x float16 (scale2 asserts it)") picks the example's dtype instead.
import torch
import triton
import triton.language as tl


@triton.jit
def scale2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


def scale2(x: torch.Tensor) -> torch.Tensor:
    assert x.dtype == torch.float16, "scale2 takes float16"
    x = x.contiguous()
    y = torch.empty_like(x)
    scale2_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
