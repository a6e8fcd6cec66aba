"""GOOD: an autotuned scale kernel (two configs); used by tests/test_kernel_reuse.py to check that a re-import of the
unchanged file adopts the autotuner's choice instead of benchmarking the configs again."""

import os

import torch
import triton
import triton.language as tl


def counting_bench(fn, quantiles=None):
    """Stands in for the GPU timer under the interpreter; counts how often configs are benchmarked."""
    os.environ["P2T_TEST_BENCH_CALLS"] = str(int(os.environ.get("P2T_TEST_BENCH_CALLS", "0")) + 1)
    fn()
    return [1.0, 1.0, 1.0]


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"],
                 do_bench=counting_bench)
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out
