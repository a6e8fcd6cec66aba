"""GeGLU, the gated activation of Gemma / T5-v1.1 MLPs: c = gelu_tanh(a) * b, forward and backward.

gelu_tanh(a) = 0.5 * a * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 * a**3))) (F.gelu(approximate="tanh"), what Gemma
uses). a (gate) and b (up) share one shape (..., N); c has it too, in a's dtype, computed in fp32 (float64 when the
validator runs the reference on upcast inputs). Gradients are compared for a and b.
"""

import torch
import torch.nn.functional as F

SHAPES = {
    "small": (16, 128),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (13, 1000),  # N not a multiple of any block: a partly masked last column block
    "batched": (2, 3, 50),  # (batch, seq, hidden): the wrappers flatten leading dims
    "edge_empty": (0, 128),
    "edge_single": (1, 1),
    "odd_rows": (21, 7),  # many short rows: several rows per program
}
# An MLP of Llama-3-8B's size at 4 x 4096 tokens (Gemma-7B's is 24576 wide; the same kernel).
BENCH_SHAPES = {"4x4096x14336": (4, 4096, 14336)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1]  # a, b


def make_inputs(case):
    """a ~ 3 * N(0, 1): the cubic term and tanh's saturation both matter there; b ~ N(0, 1)."""
    a = 3.0 * case.randn(*case.shape)
    return a.to(case.dtype), case.randn(*case.shape)


def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference, computed in fp32 (or float64) and returned in a's dtype."""
    acc = torch.promote_types(a.dtype, torch.float32)
    return (F.gelu(a.to(acc), approximate="tanh") * b.to(acc)).to(a.dtype)
