"""@triton.autotune kernels whose configs the interpreter never runs all, labelled with what the sm_90 compile says
of the configs it did not run (issue 36's cost: under a budget, every config still passes Triton's frontend, and the
likeliest to overflow still reaches a cubin).

Each launcher gives (kernel, wrapper, args, kwargs) of one launch with the config the interpreter would have run;
tests/test_target_compile.py records it and compiles every config for sm_90.
"""

import torch
import triton
import triton.language as tl

SCALE = 0.5  # BAD (late_global): read only by the config with SCALED=True, which the interpreter does not run


@triton.autotune(configs=[triton.Config({"BLOCK": b, "SCALED": False}, num_warps=w) for b in (64, 128)
                          for w in (2, 4)] + [triton.Config({"BLOCK": 64, "SCALED": True}, num_warps=4)], key=["n"])
@triton.jit
def late_global_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALED: tl.constexpr):
    # BAD: late_global -- config SCALED=True reads the float global SCALE: "Cannot access global variable" on sm_90,
    # in Triton's frontend, for that config only
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if SCALED:
        x = x * SCALE
    tl.store(out_ptr + offs, x, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_stages=2, num_warps=4),
                          triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_stages=3, num_warps=4),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_stages=8, num_warps=8)],
                 key=["M", "N", "K"])
@triton.jit
def deep_tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    # BAD: deep_tile -- the interpreter runs 32x32x32; config 128x128x64 x 8 stages needs 256 KB of shared memory,
    # over sm_90's 227 KB (the autotuner would skip it there: a warning naming the config)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_stages=s, num_warps=4) for s in (1, 2, 3, 4)],
                 key=["n"])
@triton.jit
def loop_free_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # GOOD: loop_free -- no loop to pipeline: its four configs (num_stages 1-4) are one binary, compiled once
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def launches():
    """(name, autotuner, args, kwargs) of one launch each: the config the interpreter ran, on CPU tensors."""
    x = torch.randn(1000)
    a = torch.randn(128, 128, dtype=torch.float16)
    b = torch.randn(128, 128, dtype=torch.float16)
    c = torch.empty(128, 128, dtype=torch.float16)
    return [
        ("late_global", late_global_kernel, (x, torch.empty_like(x), 1000),
         {"BLOCK": 64, "SCALED": False, "num_warps": 2}),
        ("deep_tile", deep_tile_kernel, (a, b, c, 128, 128, 128),
         {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}),
        ("loop_free", loop_free_kernel, (x, torch.empty_like(x), 1000), {"BLOCK": 256, "num_stages": 1}),
    ]
