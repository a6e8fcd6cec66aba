# Planted problems for tests/test_audit.py; labels.json names check and line of each.
import torch
import triton
import triton.language as tl


@triton.jit
def nomask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    m = tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


@triton.jit
def acc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float16)
    offs = tl.arange(0, BLOCK)
    acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def launch(x):
    out = torch.empty_like(x)
    n = x.numel()
    nomask_kernel[(n // 1024,)](x, out, n, BLOCK=1024)
    print(out.sum().item())
    return torch.softmax(out, dim=-1)
