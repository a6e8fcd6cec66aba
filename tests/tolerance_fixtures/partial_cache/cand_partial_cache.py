"""BUG (part of the result kept from the first call): sum(w) is cached on w's data_ptr, so new values written into
the same w are ignored while x's are used. The output changes with the new values, but not to the reference's:
the stale check must report wrong values on the new inputs, not an unchanged output."""

import torch
import triton
import triton.language as tl

_SUMS: dict[int, torch.Tensor] = {}


@triton.jit
def sum_kernel(w_ptr, s_ptr, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(s_ptr, tl.sum(tl.load(w_ptr + offs, mask=offs < m, other=0.0), 0))


@triton.jit
def scale_add_kernel(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + tl.load(s_ptr), mask=mask)


def reference(x, w):
    key = w.data_ptr()
    if key not in _SUMS:  # BUG: keyed on the pointer, not the values
        _SUMS[key] = torch.empty(1, device=w.device, dtype=torch.float32)
        sum_kernel[(1,)](w, _SUMS[key], w.numel(), BLOCK=triton.next_power_of_2(max(w.numel(), 16)))
    out = torch.empty_like(x)
    scale_add_kernel[(triton.cdiv(x.numel(), 1024),)](x, _SUMS[key], out, x.numel(), BLOCK=1024)
    return out
