"""GPU fault in one case only: a tl.device_assert that fires on the odd_7 case (7 elements) and holds elsewhere
(debug=True compiles it in). Expected on a GPU: odd_7 fails as `cuda_fatal` for this candidate only, the other
cases and the next candidates run in a fresh worker. The interpreter does not fire it: on CPU the candidate passes."""

import torch
import triton
import triton.language as tl


@triton.jit(debug=True)
def add_checked_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.device_assert(n != 7, "planted device assert on the 7-element case")
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        add_checked_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    if x.is_cuda:
        torch.cuda.synchronize()
    return out
