"""Naive softmax (what a user writes): the reference whose torch.compile is the baseline."""

import torch

SHAPES = {
    "small": (16, 128),
    "odd": (37, 1000),
    "edge_empty": (0, 128),
    "edge_single": (1, 1),
    "odd_7": (7, 4097),
    "long": (3, 20000),  # past stage 3's 16384-wide register tile: its online (max, sum) path runs here
}
BENCH_SHAPES = {"16384x4096": (16384, 4096)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def BYTES(case, inputs):
    """One read and one write of the (M, N) tensor: the roofline minimum."""
    (x,) = inputs
    return 2 * x.numel() * x.element_size()


def reference(x):
    xf = x.float()
    e = torch.exp(xf - xf.max(dim=-1, keepdim=True).values)
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
