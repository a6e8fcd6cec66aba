# Audit harness for tests/audit_public_corpus/sglang/merge_state.py: merge_state_triton(prefix_output, prefix_lse,
# suffix_output, suffix_lse) merges two partial attention outputs [tokens, heads, head_size] by their log-sum-exps.
import torch

ENTRY = "merge_state_triton"
AUDIT_SHAPE = (5, 3, 40)


def make_inputs(case):
    t, h, d = case.shape
    return (case.randn(t, h, d), case.randn(t, h), case.randn(t, h, d), case.randn(t, h))


def reference(prefix_output, prefix_lse, suffix_output, suffix_lse):
    lse = torch.logaddexp(prefix_lse, suffix_lse)
    out = (prefix_output * torch.exp(prefix_lse - lse)[..., None]
           + suffix_output * torch.exp(suffix_lse - lse)[..., None])
    return out, lse
