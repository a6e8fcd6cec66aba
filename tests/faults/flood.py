"""Fault: floods of output on stdout and stderr (Python and raw fds), then a correct answer."""

import os
import sys

import torch
import triton
import triton.language as tl

MIB = 1 << 20


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    line = "flood " * 20 + "\n"
    for _ in range(2 * MIB // len(line)):
        print(line, end="")
    sys.stderr.write("E" * (2 * MIB) + "\n")
    os.write(1, b"\xff\xfe raw fd 1 " * (MIB // 12))  # not UTF-8, straight to the fd
    os.write(2, b"raw fd 2 " * (MIB // 9))
    print("FLOOD-END")
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
