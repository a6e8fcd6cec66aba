"""Mean cross-entropy over a large vocabulary: logits (N, V) and int64 targets (N,) -> a scalar loss.

Rows whose target is -100 (F.cross_entropy's default ignore_index) add nothing and are not counted in the mean.
"""

import torch
import torch.nn.functional as F

SHAPES = {
    "small": (4, 1000),
    "medium": (37, 5003),  # V is neither a power of 2 nor a multiple of any block; non-contiguous runs here
    "wide": (3, 40000),  # several V chunks per row
    "rows": (129, 257),
    "edge_single": (1, 7),  # one row, always a valid target (see make_inputs)
}
BENCH_SHAPES = {"bench": (8192, 128256)}  # 8192 tokens over Llama-3's vocabulary
# bfloat16 first: the benchmark times DTYPES[0] by default and bf16 logits are what LLM training feeds this
# op.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0]  # the logits; the integer targets have no gradient
IGNORE_INDEX = -100


def make_inputs(case):
    """Normal logits and random targets, about one row in five set to IGNORE_INDEX (never row 0)."""
    N, V = case.shape
    logits = case.randn(N, V)
    target = case.randint(0, V, (N,))
    ignored = case.randint(0, 5, (N,)) == 0
    ignored[:1] = False  # at least one counted row: the mean over zero rows is NaN
    target = torch.where(ignored, torch.full_like(target, IGNORE_INDEX), target)
    return logits, target


def BYTES(case, inputs):
    """Forward minimum: the logits of the counted rows (a row whose target is IGNORE_INDEX adds nothing to the
    loss, so a kernel need not read it: about a fifth of the rows here), every target, the scalar loss.
    Counting every row put stage 3 at 120 % of copy bandwidth and raised "faster than the roofline" on it."""
    logits, target = inputs
    counted = int((target != IGNORE_INDEX).sum())
    return counted * logits.shape[-1] * logits.element_size() + target.numel() * target.element_size() \
        + logits.element_size()


def cross_entropy(logits, target):
    """The PyTorch reference: F.cross_entropy with mean reduction and ignore_index=-100."""
    return F.cross_entropy(logits, target, ignore_index=IGNORE_INDEX)
