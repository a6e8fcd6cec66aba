# The problem of tests/test_compile_zygote.py: out = 0.5 * x, one small size.
import torch

SHAPES = {"only": (1000,)}


def make_inputs(case):
    (n,) = case.shape
    return (case.randn(n),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5
