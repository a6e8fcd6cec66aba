# Audit harness for tests/audit_public_corpus/sglang/softcap_row_argmax.py: softcap_row_argmax(logits, cap,
# valid_width, col_offset) -> [rows, 2] fp32 (max of cap * tanh(logits / cap) over the first valid_width columns, its
# first argmax + col_offset).
import torch

ENTRY = "softcap_row_argmax"
AUDIT_SHAPE = (4, 5000)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n) * 20, 30.0, n, 0)


def reference(logits, cap, valid_width, col_offset):
    x = cap * torch.tanh(logits[:, :valid_width] / cap)
    val, idx = x.max(dim=1)
    return torch.stack([val, (idx + col_offset).to(torch.float32)], dim=1)
