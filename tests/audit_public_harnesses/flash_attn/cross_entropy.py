# Audit harness for tests/audit_public_corpus/flash_attn/cross_entropy.py: cross_entropy_loss(logits, labels,
# precomputed_lse=None, label_smoothing=0.0, logit_scale=1.0, lse_square_scale=0.0, ignore_index=-100,
# inplace_backward=False, process_group=None) -> (losses, z_losses), both (batch,) float, as its docstring gives it:
# the per-row cross entropy of logits * logit_scale (with label smoothing), plus z_loss = lse_square_scale * lse^2
# (also returned alone); rows whose label is ignore_index give 0. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "cross_entropy_loss"
AUDIT_SHAPE = (6, 100)  # 6 rows, vocab 100


def make_inputs(case):
    n, v = case.shape
    return (case.randn(n, v), case.randint(0, v, (n,), dtype=torch.long))


def reference(logits, labels, precomputed_lse=None, label_smoothing=0.0, logit_scale=1.0, lse_square_scale=0.0,
              ignore_index=-100, inplace_backward=False, process_group=None):
    z = logits.float() * logit_scale
    lse = torch.logsumexp(z, dim=-1)
    keep = labels != ignore_index
    loss = torch.nn.functional.cross_entropy(z, labels, ignore_index=ignore_index, label_smoothing=label_smoothing,
                                             reduction="none")
    zl = torch.where(keep, lse_square_scale * lse * lse, torch.zeros_like(lse))
    return loss + zl, zl
