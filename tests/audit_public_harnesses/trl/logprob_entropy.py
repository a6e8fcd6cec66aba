# Audit harness for tests/audit_public_corpus/trl/logprob_entropy.py: selective_log_softmax_and_entropy(logits, index,
# temperature=1.0, row_mask=None) -> (logprobs, entropy), "selected log-probabilities and Shannon entropy in one pass
# over logits": over the last dim of logits / temperature, log_softmax gathered at index, and -sum(p * log p); rows
# whose row_mask is 0 give 0. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "selective_log_softmax_and_entropy"
AUDIT_SHAPE = (2, 5, 100)  # logits [batch 2, seq 5, vocab 100]


def make_inputs(case):
    b, t, v = case.shape
    return (case.randn(b, t, v), case.randint(0, v, (b, t)))


def reference(logits, index, temperature=1.0, row_mask=None):
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    lp = logp.gather(-1, index.long().unsqueeze(-1)).squeeze(-1)
    ent = -(logp.exp() * logp).sum(-1)
    if row_mask is not None:
        lp, ent = lp * row_mask, ent * row_mask
    return lp, ent
