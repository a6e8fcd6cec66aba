"""Kernels that run under Triton's interpreter, each labelled with what the sm_90 compile says (issue 36).

Each launcher runs its kernel once on small CPU tensors; tests/test_target_compile.py records the launch and
compiles it for sm_90.
"""

import torch
import triton
import triton.language as tl

SCALE = 0.5  # BAD (no_sm90_global): a plain float global; the interpreter reads it, the GPU compiler refuses it


@triton.jit
def global_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # BAD: no_sm90_global -- "Cannot access global variable SCALE" on sm_90 (Triton 3.6 and 3.9)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


@triton.jit
def deep_pipeline_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    # BAD: smem_over_sm90 -- launched with num_stages=8: 8 stages x (128x64 + 64x128) fp16 = 256 KB of shared
    # memory per block, over sm_90's 227 KB
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def wide_row_kernel(x_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # BAD: spills -- one warp holds a 32 x 256 fp32 tile (256 values per thread) live across a row max and a sum
    r = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    x = tl.load(x_ptr + r)
    y = tl.exp(x - tl.max(x, axis=1)[:, None])
    z = y / tl.sum(y, axis=1)[:, None] + x * tl.sum(x * y, axis=1)[:, None]
    tl.store(out_ptr + r, z)


@triton.jit
def clean_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # GOOD: compiles for sm_90, no spills, little shared memory
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def launches():
    """(name, kernel, args, kwargs) of one launch each, on CPU tensors."""
    x = torch.randn(1000)
    a = torch.randn(128, 128, dtype=torch.float16)
    b = torch.randn(128, 128, dtype=torch.float16)
    c = torch.empty(128, 128, dtype=torch.float16)
    w = torch.randn(32, 256)
    return [
        ("no_sm90_global", global_scale_kernel, (x, torch.empty_like(x), 1000), {"BLOCK": 256}),
        ("smem_over_sm90", deep_pipeline_kernel, (a, b, c, 128, 128, 128),
         {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_stages": 8, "num_warps": 8}),
        ("spills", wide_row_kernel, (w, torch.empty_like(w)), {"BLOCK_M": 32, "BLOCK_N": 256, "num_warps": 1}),
        ("clean", clean_kernel, (x, torch.empty_like(x), 1000), {"BLOCK": 256}),
    ]


@triton.jit
def builtin_min_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    # WARN: portability -- Python's min on two blocks: Triton 3.6 and 3.9 compile it with a DeprecationWarning
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, min(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


def min_launch():
    """The builtin-min kernel's launch (apart: it compiles, with a warning)."""
    x = torch.randn(128)
    return builtin_min_kernel, (x, x.clone(), torch.empty_like(x)), {"BLOCK": 128}
