"""Correct: @triton.autotune over block sizes (keyed on n); the grid reads the chosen BLOCK.

Triton's autotuner cannot benchmark under the CPU interpreter (no driver), so there only the first
config is kept, as in examples/vector_add/stage3.py."""

import os

import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=4),
           triton.Config({"BLOCK": 1024}, num_warps=8)]
if os.environ.get("TRITON_INTERPRET") == "1":
    CONFIGS = CONFIGS[:1]


@triton.autotune(configs=CONFIGS, key=["n"])
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
    if n:
        gate_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    return out
