# Audit harness (no task reference): the example call of good.py's causal_attention. The sequence length comes first
# in the shape, so the sizes probe's empty variant empties it (S = 0: BS = 0, which does not compile).
import torch.nn.functional as F

ENTRY = "causal_attention"
AUDIT_SHAPE = (32, 2, 16)  # (seq_len, batch * heads, head_dim)


def make_inputs(case):
    s, bh, d = case.shape
    return tuple(case.randn(bh, s, d) for _ in range(3))


def reference(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
