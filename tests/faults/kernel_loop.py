"""Fault: a Triton kernel whose loop never ends (the flag it polls is never cleared)."""

import torch
import triton
import triton.language as tl


@triton.jit
def spin_kernel(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask)
    flag = tl.load(flag_ptr)
    while flag != 0:
        acc = acc + 1.0
        tl.store(out_ptr + offs, acc, mask=mask)
        flag = tl.load(flag_ptr, volatile=True)


def reference(x, y):
    out = torch.empty_like(x)
    flag = torch.ones(1, dtype=torch.int32, device=x.device)
    n = x.numel()
    spin_kernel[(triton.cdiv(max(n, 1), 256),)](x, out, flag, n, BLOCK=256)
    return out
