"""LayerNorm over the last dim with an affine weight and bias, eps = 1e-5: forward and backward.

x (M, N), weight (N,), bias (N,) -> y (M, N) in x's dtype; statistics in fp32 (float64 when the validator
runs the reference on upcast inputs). Gradients are compared for x, weight and bias (`gradients=true`).
"""

import torch
import torch.nn.functional as F

EPS = 1e-5
SHAPES = {
    "small": (16, 128),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (37, 1000),
    "edge_empty": (0, 128),
    "edge_single": (1, 1),  # variance 0: y = bias, dx = 0
    "odd_7": (7, 4097),
    "odd_rows": (41, 7),  # many short rows: the multi-row paths and the dw/db reduction over rows
}
BENCH_SHAPES = {"8192x8192": (8192, 8192)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1, 2]  # x, weight, bias
# bf16 atol 3e-2 (default 1e-2): dweight and dbias are sums over M rows, and the validator draws the upstream
# gradient in float64 for the reference but rounded to bf16 for the candidate; that alone moves a near-zero sum
# by about sqrt(M) * 2**-9 (0.01-0.03 at these M), whatever the kernel does. rtol stays at bf16's 1.6e-2.
TOLERANCES = {"bfloat16": (1.6e-2, 3e-2)}


def make_inputs(case):
    """x ~ N(0, 1) shifted by 0.5 (a non-zero mean to subtract), weight ~ 1 + N(0, 0.1**2), bias ~ N(0, 1)."""
    M, N = case.shape
    x = case.randn(M, N) + 0.5
    weight = 1.0 + 0.1 * case.randn(N)
    bias = case.randn(N)
    return x.to(case.dtype), weight.to(case.dtype), bias.to(case.dtype)


def BYTES(case, inputs):
    """Forward minimum: read x, weight and bias once, write y once."""
    x, w, _ = inputs
    return 2 * x.numel() * x.element_size() + 2 * w.numel() * w.element_size()


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference, computed in fp32 (or float64) and returned in x's dtype."""
    acc = torch.promote_types(x.dtype, torch.float32)
    return F.layer_norm(x.to(acc), (x.shape[-1],), weight.to(acc), bias.to(acc), EPS).to(x.dtype)
