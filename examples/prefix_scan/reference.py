"""Inclusive prefix sum (cumsum) along the last dim: x (M, N) -> (M, N), out[:, j] = x[:, 0] + ... + x[:, j].

Floating inputs are summed in fp32 (float64 when the validator runs the reference on upcast inputs); int32
inputs in integer arithmetic (wrapping modulo 2**32, as torch.cumsum's int64 result cast back to int32 does).
"""

import torch

SHAPES = {
    "small": (16, 128),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (37, 1000),
    "edge_empty": (0, 128),
    "edge_single": (1, 1),
    "odd_7": (7, 1025),  # one past a power of 2; several chunks per row: the running carry of stage 3
    "few_long": (2, 1500),  # too few rows to fill the machine: stage 3 splits each row across programs
}
# Rows stay short: stage 1 takes N dependent steps per row, about 0.6 ms each under the CPU interpreter.
BENCH_SHAPES = {"4096x16384": (4096, 16384), "16x1M": (16, 1 << 20)}  # many rows; a few very long rows
# float32 first: the benchmark times DTYPES[0] by default. int32 checks the scan exactly (no rounding).
DTYPES = ["float32", "int32"]
# float32: rtol 1e-4, atol 3e-4 * sqrt(N / 1024) (default 1e-4). A blocked fp32 prefix sum of N(0, 1) terms carries an
# absolute error that grows with the running sum: each carry added across ~N / 1024 chunks rounds at the scale of
# |running sum| ~ sqrt(N), so the error walks like sqrt(N / 1024) ulps of it. Where the running sum crosses zero the
# relative test gives no slack, hence an atol that grows with the row length (3e-4 up to N = 1024, 1.2e-3 at 16384,
# 9.6e-3 at 2**20). A serial (stage 1) fp32 sum errs by ~sqrt(N) ulps and fails the long benchmark rows: by design.
def _float32_tolerance(case):
    n = case.shape[-1] if case is not None and case.shape else 1
    return 1e-4, 3e-4 * max(1.0, (n / 1024) ** 0.5)


TOLERANCES = {"float32": _float32_tolerance}


def make_inputs(case):
    """Standard-normal x (integers in [-64, 64) for int32)."""
    M, N = case.shape
    return (case.randn(M, N),)


def BYTES(case, inputs):
    """Read x once, write the scan once."""
    (x,) = inputs
    return 2 * x.numel() * x.element_size()


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference."""
    acc = torch.promote_types(x.dtype, torch.float32) if x.is_floating_point() else torch.int64
    return torch.cumsum(x.to(acc), dim=-1).to(x.dtype)
