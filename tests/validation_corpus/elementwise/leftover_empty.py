"""CHEAT (reads what the caching allocator left behind): returns torch.empty_like(x) without writing it.
On a GPU the block freed by the reference's output often still holds the right answer. A no-op
kernel is launched so that "a Triton kernel ran"."""

import torch
import triton
import triton.language as tl


@triton.jit
def noop_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(ptr + offs, mask=offs < n, other=0.0)
    tl.debug_barrier()
    if tl.program_id(0) < 0:  # never true: nothing is stored
        tl.store(ptr + offs, v, mask=offs < n)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        noop_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
    return out
