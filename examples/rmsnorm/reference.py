"""RMSNorm over the last dim (Llama style, eps = 1e-6): y = x / sqrt(mean(x**2) + eps) * weight.

x (M, N), weight (N,) -> y (M, N) in x's dtype, computed in fp32 (float64 when the validator runs the
reference on upcast inputs). Gradients are compared for x and weight (`gradients=true`).
"""

import torch

EPS = 1e-6
SHAPES = {
    "small": (16, 128),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (37, 1000),
    "edge_empty": (0, 128),
    "edge_single": (1, 1),
    "odd_7": (7, 4097),
    "odd_rows": (41, 7),  # many short rows: the multi-row paths and the dweight reduction over rows
}
BENCH_SHAPES = {"8192x8192": (8192, 8192)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1]  # x, weight
# bf16 atol 3e-2 (default 1e-2): dweight is a sum over M rows, and the validator draws the upstream gradient in
# float64 for the reference but rounded to bf16 for the candidate; that alone moves a near-zero sum by about
# sqrt(M) * 2**-9 (0.01-0.03 at these M), whatever the kernel does. rtol stays at bf16's 1.6e-2.
TOLERANCES = {"bfloat16": (1.6e-2, 3e-2)}


def make_inputs(case):
    """x ~ N(0, 1), weight ~ 1 + N(0, 0.1**2)."""
    M, N = case.shape
    x = case.randn(M, N)
    weight = 1.0 + 0.1 * case.randn(N)
    return x, weight.to(case.dtype)


def BYTES(case, inputs):
    """Forward minimum: read x and weight once, write y once."""
    x, w = inputs
    return 2 * x.numel() * x.element_size() + w.numel() * w.element_size()


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference, computed in fp32 (or float64) and returned in x's dtype."""
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    return (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight.to(acc)).to(x.dtype)
