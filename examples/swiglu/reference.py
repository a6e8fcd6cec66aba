"""SwiGLU, the gated activation of Llama / Mistral / Qwen MLPs: c = silu(a) * b, forward and backward.

a (the gate projection) and b (the up projection) share one shape (..., N); c has it too, in a's dtype, computed in
fp32 (float64 when the validator runs the reference on upcast inputs). Gradients are compared for a and b.
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
# Llama-3-8B's MLP at 4 x 4096 tokens: gate and up are (4, 4096, 14336) each.
BENCH_SHAPES = {"4x4096x14336": (4, 4096, 14336)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1]  # a, b


def make_inputs(case):
    """a ~ 3 * N(0, 1), so silu's negative tail and its saturation are both exercised; b ~ N(0, 1)."""
    a = 3.0 * case.randn(*case.shape)
    return a.to(case.dtype), case.randn(*case.shape)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference, computed in fp32 (or float64) and returned in a's dtype."""
    acc = torch.promote_types(a.dtype, torch.float32)
    return (F.silu(a.to(acc)) * b.to(acc)).to(a.dtype)
