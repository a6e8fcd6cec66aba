"""The prewarm's kernel (worker/prewarm.py), in a module of its own: importing triton must wait until runtime.setup
has chosen interpreter or GPU."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def prewarm_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
