"""Causal scaled dot-product attention forward: q, k, v (B, H, S, D) -> (B, H, S, D), scale 1/sqrt(D).

case.shape is (B, H, S, D). The Triton stages assume D is a power of 2 between 16 and 256 (tl.dot tiles) and
that q, k and v share one shape (no grouped-query heads); they refuse anything else with a ValueError.
"""

import torch.nn.functional as F

SHAPES = {
    "small": (1, 2, 77, 64),  # S not a multiple of any block
    "medium": (2, 3, 128, 32),  # non-contiguous variants run here
    "edge_single": (1, 1, 1, 16),  # one query, one key: the output is v
    "long": (1, 1, 200, 128),  # several key blocks, the diagonal block partial
}
BENCH_SHAPES = {"bench": (4, 32, 4096, 128)}
DTYPES = ["bfloat16", "float16"]
NONCONTIGUOUS = True
# bf16 atol 3e-2 (default 1e-2) for the gradient check (stage 3, `--gradients`): PyTorch's own bf16 SDPA backward
# is off from float64 by up to 0.025 at these shapes (dv, causal, S=128; a sum over up to S rows of bf16-rounded
# probabilities), and stage 3's dq reaches 0.015-0.019 the same way. rtol stays at bf16's 1.6e-2.
TOLERANCES = {"bfloat16": (1.6e-2, 3e-2)}


def make_inputs(case):
    """Standard-normal q, k, v."""
    B, H, S, D = case.shape
    return case.randn(B, H, S, D), case.randn(B, H, S, D), case.randn(B, H, S, D)


def FLOPS(case, inputs):
    """Two S x S x D matmuls per head (QK^T and PV), halved by the causal mask."""
    B, H, S, D = case.shape
    return 2 * 2 * B * H * S * S * D // 2


def attention(q, k, v):
    """The PyTorch reference (SDPA runs float64 through its math path, which the validator relies on)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
