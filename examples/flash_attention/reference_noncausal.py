"""Non-causal scaled dot-product attention: q, k, v (B, H, S, D) -> (B, H, S, D), scale 1/sqrt(D).

The non-causal companion of reference.py (same cases): validate stage3.py's `attention_noncausal` against it,
`pytorch-to-triton validate examples/flash_attention/reference_noncausal.py examples/flash_attention/stage3.py
--gradients`. Only stage 3 implements the non-causal path.
"""

import torch.nn.functional as F

SHAPES = {
    "small": (1, 2, 77, 64),  # S not a multiple of any block: the masked tail key block
    "medium": (2, 3, 128, 32),  # non-contiguous variants run here
    "edge_single": (1, 1, 1, 16),  # one query, one key: the output is v
    "long": (1, 1, 200, 128),  # several key blocks, the last partial
}
BENCH_SHAPES = {"bench": (4, 32, 4096, 128)}
DTYPES = ["bfloat16", "float16"]
NONCONTIGUOUS = True
GRAD_INPUTS = [0, 1, 2]  # q, k, v
# bf16 atol 3e-2 (default 1e-2), as in reference.py: bf16 attention gradients are off from float64 by 0.01-0.025
# at these shapes in PyTorch's own SDPA backward.
TOLERANCES = {"bfloat16": (1.6e-2, 3e-2)}


def make_inputs(case):
    """Standard-normal q, k, v."""
    B, H, S, D = case.shape
    return case.randn(B, H, S, D), case.randn(B, H, S, D), case.randn(B, H, S, D)


def FLOPS(case, inputs):
    """Two S x S x D matmuls per head (QK^T and PV)."""
    B, H, S, D = case.shape
    return 2 * 2 * B * H * S * S * D


def attention_noncausal(q, k, v):
    """The PyTorch reference (SDPA runs float64 through its math path, which the validator relies on)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=False)
