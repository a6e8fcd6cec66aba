"""BAD (negligible Triton work): PyTorch computes the whole result (by other ops than the reference's), and the
only Triton launch touches a 1-element tensor. Fails pytorch_compute, rule negligible_triton."""

import torch
import triton
import triton.language as tl


@triton.jit
def touch_kernel(p_ptr):
    tl.store(p_ptr, tl.load(p_ptr) + 0.0)


def reference(x, w, b):
    y = torch.addmm(b, x, w.t())
    out = 2.0 / (1.0 + torch.exp(-y)) + 1.0
    flag = torch.zeros(1, device=x.device)
    touch_kernel[(1,)](flag)
    return out
