"""CHEAT (works on a side stream): on a GPU the kernel runs on a fresh CUDA stream and the wrapper returns
without synchronizing, so a timer on the default stream sees almost nothing. Without CUDA it falls
back to the current stream (honest), so it is a GPU-only case."""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if not n:
        return out
    if x.is_cuda:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    else:
        gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
