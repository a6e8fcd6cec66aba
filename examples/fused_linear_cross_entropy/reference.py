"""Fused linear + cross-entropy (the LM head and its loss): mean CE of x @ weight^T against int64 targets.

x (BT, H) hidden states, weight (V, H) the LM head, target (BT,) class indices; rows whose target is -100
(F.cross_entropy's ignore_index) add nothing and are not counted in the mean. The loss is a scalar in x's dtype,
computed in fp32 (float64 when the validator runs the reference on upcast inputs). The point of a fused kernel is
that the (BT, V) logits (8192 x 128256 bf16 = 2 GiB at the bench shape, 4 GiB more for their fp32 gradient) are
never materialized. case.shape is (BT, H, V). Gradients are compared for x and weight.
"""

import torch
import torch.nn.functional as F

SHAPES = {
    "small": (8, 32, 100),  # non-contiguous variants run here (the first case that is not an edge)
    "odd": (37, 40, 130),  # nothing a multiple of a block; several row chunks in the Triton stages
    "wide": (3, 16, 600),  # V over several CE chunks (the interpreter's are 256 wide)
    "edge_single": (1, 3, 7),  # one row (always a valid target, see make_inputs); H below any matmul tile
}
# 8192 tokens, Llama-3-8B's hidden size and vocabulary.
BENCH_SHAPES = {"BT8192_H4096_V128256": (8192, 4096, 128256)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1]  # x, weight; the integer targets have no gradient
IGNORE_INDEX = -100
# NONCONTIGUOUS stays on: a transposed weight is what an nn.Linear's weight.t() gives, and strides must work.


def make_inputs(case):
    """x ~ N(0, 1), weight ~ N(0, 1/H) (logits of unit scale), about one target in five set to IGNORE_INDEX
    (never row 0: the mean over zero rows is NaN)."""
    BT, H, V = case.shape
    x = case.randn(BT, H)
    weight = (case.randn(V, H).float() / H**0.5).to(case.dtype)
    target = case.randint(0, V, (BT,))
    ignored = case.randint(0, 5, (BT,)) == 0
    ignored[:1] = False
    target = torch.where(ignored, torch.full_like(target, IGNORE_INDEX), target)
    return x, weight, target


def FLOPS(case, inputs):
    """The logits matmul of a forward call (a call with gradients adds two more of the same size)."""
    BT, H, V = case.shape
    return 2 * BT * H * V


def fused_linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The PyTorch reference: F.cross_entropy(x @ weight^T) in fp32 (or float64), returned in x's dtype."""
    acc = torch.promote_types(x.dtype, torch.float32)
    logits = x.to(acc) @ weight.to(acc).t()
    return F.cross_entropy(logits, target, ignore_index=IGNORE_INDEX).to(x.dtype)
