# Audit harness for tests/audit_public_corpus/lmdeploy/multinomial_sampling.py: multinomial_sampling(scores, seeds,
# offsets) -> [batch] sampled positions, for scores [batch, vocab] already sorted in descending order (softmax
# probabilities). No reference: the draw comes from tl.rand(seed, offset).
import torch

ENTRY = "multinomial_sampling"
AUDIT_SHAPE = (4, 300)


def make_inputs(case):
    b, n = case.shape
    scores = torch.softmax(case.randn(b, n), dim=-1).sort(dim=-1, descending=True).values
    return (scores, case.randint(0, 2**31 - 1, (b,)), case.randint(0, 1000, (b,)))
