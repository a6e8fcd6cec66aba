"""Known error at compile time: a @jit helper uses an undefined name (compiled for a GPU target in the test)."""

import triton
import triton.language as tl


@triton.jit
def _scale(x):
    return x * undefined_scale  # EXPECT: compile  # noqa: F821


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = _scale(x)  # CALL
    tl.store(x_ptr + offs, y, mask=offs < n)
