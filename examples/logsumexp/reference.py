"""logsumexp along the last dim: x (M, N) -> (M,) = log(sum(exp(x), dim=-1)), in x's dtype.

A row with N = 0 gives -inf, as in torch.logsumexp. The case `big_values` scales x by 100, so exp(x) overflows
fp32 (above ~88) unless the kernel subtracts a running maximum.
"""

import torch

SHAPES = {
    "small": (16, 128),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (37, 1000),
    "edge_empty": (0, 128),
    "edge_single": (1, 1),
    "empty_rows": (3, 0),  # rows of zero length: -inf
    "odd_7": (7, 4097),
    "long": (3, 20000),  # several chunks per row; stage 3 also splits these few rows across programs
    "big_values": (5, 3000),  # x * 100
}
BENCH_SHAPES = {"16384x4096": (16384, 4096), "64x1M": (64, 1 << 20)}  # many rows; few very long rows
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]


def make_inputs(case):
    """Standard-normal x plus a random offset per row (N(0, 2**2)), all times 100 for the big_values case.

    The offsets spread the results: without them every row's logsumexp is log(N) + 1/2 within ~0.01, and
    a few bf16 results (ulp 0.0625 near 10) can come out bitwise equal across trials, which the validator's
    stale_result check reads as an output that ignores its inputs.
    """
    M, N = case.shape
    x = (case.randn(M, N).float() + 2.0 * case.randn(M, 1).float()).to(case.dtype)
    if case.name == "big_values":
        x = (x.float() * 100.0).to(x.dtype)
    return (x,)


def BYTES(case, inputs):
    """Read x once, write one value per row."""
    (x,) = inputs
    return (x.numel() + x.shape[0]) * x.element_size()


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference, computed in fp32 (or float64) and returned in x's dtype."""
    return torch.logsumexp(x.to(torch.promote_types(x.dtype, torch.float32)), dim=-1).to(x.dtype)
