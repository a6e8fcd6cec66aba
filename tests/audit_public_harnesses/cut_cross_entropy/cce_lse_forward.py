# Audit harness for tests/audit_public_corpus/cut_cross_entropy/cce_lse_forward.py: cce_lse_forward_kernel(e, c,
# valids=None, softcap=None, return_logit_avg=False) -> lse [B] float32, or (lse, logit_avg [V] float32): for each row
# r of e picked by valids (all rows without), lse[r] = logsumexp over the vocabulary of the logits e[row] @ c.T
# (tanh-softcapped when softcap is given), never materialising the [B, V] logits; logit_avg = the logits' mean over
# those rows (the vocabulary ordering of the backward's filter). Called as cce.py's LinearCrossEntropyFunction.forward
# calls it for cut_cross_entropy.linear_cross_entropy(e, c, targets, shift=True) in training (the transformers
# patch's call for a causal LM): e the final hidden states [batch, seq, D] made contiguous and flattened to [N, D],
# c the lm_head weight [V, D] (contiguous), valids the int32 flat row indices whose next target is not ignore_index
# (utils._build_flat_valids with shift: the prompt tokens are -100 here), softcap None (Llama; Gemma 2 passes 30.0),
# return_logit_avg True (needs_grad and the default filter_eps="auto"). fp16 e and c (the interpreter runs fp16
# faithfully; bf16 in most training), D 1024, V 1000 (real vocabularies are 32k-256k: too slow for the interpreter).
# The file imports cut_cross_entropy.tl_autotune and .tl_utils: the stand-in package's path is the corpus folder, so
# those imports load the corpus copies (cut_cross_entropy/tl_autotune.py, tl_utils.py, unchanged; CCE_AUTOTUNE unset:
# the fixed best configs, as in the package's default).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("cut_cross_entropy", types.ModuleType("cut_cross_entropy"))
sys.modules["cut_cross_entropy"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus"
                                                 / "cut_cross_entropy")]

ENTRY = "cce_lse_forward_kernel"
AUDIT_SHAPE = (2, 24, 1000, 1024)  # sequences, sequence length, vocabulary V, hidden D
IGNORE_INDEX = -100


def make_inputs(case):
    b, t, v, d = case.shape
    targets = case.randint(0, v, (b, t), dtype=torch.int64)
    targets[:, : t // 3] = IGNORE_INDEX  # the prompt is not trained on
    valids = (targets[:, 1:] != IGNORE_INDEX).nonzero().to(torch.int32)  # utils._build_flat_valids, shift=True
    valids = (valids[:, 0] * targets.stride(0) + valids[:, 1]).to(torch.int32)
    e = case.randn(b * t, d, dtype=torch.float16)  # normed hidden states
    c = (0.02 * case.randn(v, d)).to(torch.float16)  # lm_head weight
    return (e, c, valids, None, True)


def reference(e, c, valids=None, softcap=None, return_logit_avg=False):
    rows = torch.arange(e.shape[0], device=e.device) if valids is None else valids.long()
    logits = e.double()[rows] @ c.double().T
    if softcap is not None:
        logits = torch.tanh(logits / softcap) * softcap
    lse = torch.logsumexp(logits, -1).float()
    if return_logit_avg:  # the kernel's sum over the rows / B: zeros when no row counts (B = 0)
        return lse, (logits.sum(0) / max(len(rows), 1)).float()
    return lse
