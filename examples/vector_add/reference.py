"""out = x + y for two 1-D tensors of the same length (the first Triton tutorial)."""

import torch

SHAPES = {
    "small": (1024,),
    "medium": (20001,),  # no power of 2 in sight; the non-contiguous (strided) variant runs here
    "edge_empty": (0,),
    "edge_single": (1,),
    "odd_7": (7,),
    "odd_1000": (1000,),
    "odd_4097": (4097,),
}
BENCH_SHAPES = {"2^28": (1 << 28,)}  # 1 GiB per fp32 tensor: far past the H200's 60 MiB L2
# float32 first: the benchmark times DTYPES[0] by default.
DTYPES = ["float32", "bfloat16", "float16"]


def make_inputs(case):
    """Two standard-normal vectors of length n."""
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def BYTES(case, inputs):
    """Read x and y once, write out once: the minimum traffic (vector add is purely memory bound)."""
    x, _ = inputs
    return 3 * x.numel() * x.element_size()


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference."""
    return x + y
