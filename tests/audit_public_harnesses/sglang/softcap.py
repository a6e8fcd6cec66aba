# Audit harness for tests/audit_public_corpus/sglang/softcap.py: softcap_inplace_logits(logits, cap) writes
# cap * tanh(logits / cap) into the logits [tokens, vocab] and returns them.
import torch

ENTRY = "softcap_inplace_logits"
AUDIT_SHAPE = (4, 1500)


def make_inputs(case):
    return (case.randn(*case.shape) * 20, 30.0)


def reference(logits, cap):
    return cap * torch.tanh(logits / cap)
