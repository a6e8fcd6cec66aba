# Audit harness for tests/audit_public_corpus/cut_cross_entropy/cce_backward.py: cce_backward_kernel(do, e, c, lse,
# valids, softcap, filter_eps, targets=None, shift=False, vocab_ordering=None, grad_scale=1.0) -> (de, dc): the
# gradients of the linear cross-entropy loss: for each row r picked by valids, g = (softmax(e[r] @ c.T) -
# onehot(targets[r + 1 if shift else r])) * do * grad_scale (softmax from the forward's lse; a [BLOCK_B, BLOCK_V] block
# whose every |g| is below filter_eps is skipped: the filter), de[r] = g @ c, dc = sum_r g^T e[r]; dc is None unless
# c.requires_grad. Called as cce.py's LinearCrossEntropyFunction.backward calls it for linear_cross_entropy(e, c,
# targets, shift=True) with the default reduction "mean" in training: do the scalar grad_out (1.0 from loss.backward()),
# e the flattened hidden states [N, D] and c the trainable lm_head weight [V, D] (requires_grad: dc is computed), both
# fp16 (the interpreter runs fp16 faithfully; bf16 in most training; the wrapper takes only fp16/bf16 e), lse the
# forward's float32 [B] over the valids rows, valids the int32 flat rows whose next target is not -100, softcap None,
# targets the flattened int64 targets [N], vocab_ordering = argsort of the forward's logit_avg as int32
# (sort_logit_avg, a torch.compile'd argsort: computed here with torch.argsort), grad_scale = 1 / B. filter_eps None:
# linear_cross_entropy(..., filter_eps=None), the exact gradient, a documented caller choice; the default "high"
# (finfo(dtype).eps / 32) adds only the block skip, whose tl.reduce with a @triton.jit combine function the interpreter
# runs element by element (11 s per program here, minutes per audit). D 256, V 1000 (8 vocabulary blocks: the dE
# lock-adds of 8 programs). The file imports cut_cross_entropy.tl_autotune and .tl_utils: the stand-in package's path
# is the corpus folder (the corpus copies load unchanged).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("cut_cross_entropy", types.ModuleType("cut_cross_entropy"))
sys.modules["cut_cross_entropy"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus"
                                                 / "cut_cross_entropy")]

ENTRY = "cce_backward_kernel"
AUDIT_SHAPE = (2, 24, 1000, 256)  # sequences, sequence length, vocabulary V, hidden D
IGNORE_INDEX = -100


def make_inputs(case):
    b, t, v, d = case.shape
    targets = case.randint(0, v, (b, t), dtype=torch.int64)
    targets[:, : t // 3] = IGNORE_INDEX
    valids = (targets[:, 1:] != IGNORE_INDEX).nonzero().to(torch.int32)  # utils._build_flat_valids, shift=True
    valids = (valids[:, 0] * targets.stride(0) + valids[:, 1]).to(torch.int32)
    e = case.randn(b * t, d, dtype=torch.float16)
    c = (0.02 * case.randn(v, d)).to(torch.float16).requires_grad_()
    logits = e.float()[valids.long()] @ c.detach().float().T  # the forward's lse and logit_avg
    lse = torch.logsumexp(logits, -1)
    ordering = torch.argsort(logits.mean(0)).to(torch.int32)
    do = torch.ones((), device=case.device)  # d loss / d loss for reduction="mean"
    return (do, e, c, lse, valids, None, None, targets.flatten(), True, ordering, 1.0 / max(valids.numel(), 1))


def reference(do, e, c, lse, valids, softcap, filter_eps, targets=None, shift=False, vocab_ordering=None,
              grad_scale=1.0):
    rows = torch.arange(e.shape[0], device=e.device) if valids is None else valids.long()
    logits = e.double()[rows] @ c.detach().double().T
    if softcap is not None:
        capped = torch.tanh(logits / softcap) * softcap
        g = torch.exp(capped - lse.double()[:, None])
    else:
        g = torch.exp(logits - lse.double()[:, None])
    if targets is not None:
        tgt = targets[rows + 1] if shift else targets[rows]
        g[torch.arange(len(rows)), tgt] -= 1.0
    if softcap is not None:
        g = g * (1 - (capped / softcap) ** 2)
    g = g * (do.double().reshape(-1)[0] if do.numel() == 1 else do.double().reshape(-1)[rows + 1 if shift else rows
                                                                                          ][:, None]) * grad_scale
    de = torch.zeros(e.shape, dtype=torch.float64, device=e.device)
    de[rows] = g @ c.detach().double()
    dc = g.T @ e.double()[rows]
    return de.to(e.dtype), (dc.to(c.dtype) if c.requires_grad else None)
