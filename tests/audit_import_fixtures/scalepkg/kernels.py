# label: bad sizes: scale_kernel loads and stores without a mask, past n on a last partial block (the entries
# import it); scale_masked_kernel is its good twin; unused_kernel is never imported and must not be reported from an
# entry's audit.
import triton
import triton.language as tl


@triton.jit
def _times(x, s):
    return x * s


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # no mask: reads past n on the last block
    tl.store(y_ptr + offs, _times(x, s))


@triton.jit
def scale_masked_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, _times(x, s), mask=mask)


@triton.jit
def unused_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
