# Audit harness for tests/audit_public_corpus/deepspeed/layer_norm.py: layer_norm(a, weight, bias, eps) on [B, T, C].
import torch

ENTRY = "layer_norm"
AUDIT_SHAPE = (3, 5, 200)


def make_inputs(case):
    b, t, c = case.shape
    return (case.randn(b, t, c), case.randn(c), case.randn(c), 1e-5)


def reference(a, weight, bias, eps):
    return torch.nn.functional.layer_norm(a, a.shape[-1:], weight, bias, eps)
