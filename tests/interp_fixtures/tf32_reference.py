"""A long-K fp32 matmul against a float64 reference at the default fp32 tolerance: a TF32 dot cannot pass it."""

import torch

SHAPES = {"long_k": (16, 1024, 16)}  # M, K, N: one 16x16 program, K long enough for TF32 error to show (~1e-3)
DTYPES = ["float32"]
NONCONTIGUOUS = False
# No TOLERANCES: float32's default (1e-4, 1e-4) holds for fp32 accumulation over K=1024 (errors ~4e-5 abs on
# values ~30) and not for TF32 operands (~2e-3 relative), on the GPU and now under the interpreter.


def make_inputs(case):
    m, k, n = case.shape
    return case.randn(m, k), case.randn(k, n)


def reference(a, b):
    return torch.matmul(a, b)
