# Audit harness for tests/audit_public_corpus/colossalai/softmax.py: softmax(input, mask=None, dim=-1), the softmax of
# input over its last dim (input viewed as rows [N, hidden_dim]), in the dtype of input. The optional additive mask
# is left at its default here (the mask path is listed under `problems`). The file imports only torch and triton: no
# stand-in.
import torch

ENTRY = "softmax"
AUDIT_SHAPE = (6, 100)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def reference(x, mask=None, dim=-1):
    return torch.softmax(x.float() if mask is None else x.float() + mask.float(), dim=-1).to(x.dtype)
