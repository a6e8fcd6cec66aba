# Audit harness for tests/audit_public_corpus/cut_cross_entropy/indexed_dot.py: indexed_neg_dot_forward_kernel(e, c,
# inds, shift=False, valids=None, softcap=None, out_dtype=None) -> out [B]: for each row r picked by valids (all rows
# without), out = -(e[r] . c[inds[r + 1 if shift else r]]), the negated logit of the target (softcapped when softcap
# is given), in out_dtype (e's dtype when None). Called as cce.py's LinearCrossEntropyFunction.forward calls it for
# cut_cross_entropy.linear_cross_entropy(e, c, targets, shift=True) (the transformers patch's causal-LM call): e the
# final hidden states flattened to [N, D] (contiguous), c the lm_head weight [V, D], inds the flattened int64 targets
# [N] with -100 on the prompt, shift True, valids the int32 flat rows whose next target is not -100
# (utils._build_flat_valids), softcap None (Llama), out_dtype = lse.dtype = float32. fp16 e and c (the interpreter runs
# fp16 faithfully; bf16 in most training), D 1024, V 1000. The products e * c are formed in the input dtype and summed
# in fp32 (by design: the loss's precision is the input dtype's), so float32 outputs are judged at 2e-3. The file
# imports cut_cross_entropy.tl_autotune, .tl_utils and .utils: the stand-in package's path is the corpus folder (the
# corpus copies of tl_autotune.py and tl_utils.py load unchanged); utils (not in the corpus) is a stand-in with its
# softcapping, the same math without utils.py's torch.compile (used only when softcap is given).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("cut_cross_entropy", types.ModuleType("cut_cross_entropy"))
sys.modules["cut_cross_entropy"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus"
                                                 / "cut_cross_entropy")]
_utils = sys.modules.setdefault("cut_cross_entropy.utils", types.ModuleType("cut_cross_entropy.utils"))
_utils.softcapping = lambda logits, softcap: torch.tanh(logits / softcap) * softcap  # utils.softcapping, uncompiled

ENTRY = "indexed_neg_dot_forward_kernel"
AUDIT_SHAPE = (2, 24, 1000, 1024)  # sequences, sequence length, vocabulary V, hidden D
IGNORE_INDEX = -100
TOLERANCES = {"float32": (2e-3, 2e-3)}  # fp16 products summed in fp32, compared with exact products


def make_inputs(case):
    b, t, v, d = case.shape
    targets = case.randint(0, v, (b, t), dtype=torch.int64)
    targets[:, : t // 3] = IGNORE_INDEX
    valids = (targets[:, 1:] != IGNORE_INDEX).nonzero().to(torch.int32)  # utils._build_flat_valids, shift=True
    valids = (valids[:, 0] * targets.stride(0) + valids[:, 1]).to(torch.int32)
    e = case.randn(b * t, d, dtype=torch.float16)
    c = (0.02 * case.randn(v, d)).to(torch.float16)
    return (e, c, targets.flatten(), True, valids, None, torch.float32)


def reference(e, c, inds, shift=False, valids=None, softcap=None, out_dtype=None):
    rows = torch.arange(e.shape[0], device=e.device) if valids is None else valids.long()
    tgt = inds[rows + 1] if shift else inds[rows]
    if (tgt < 0).any() or (tgt >= c.shape[0]).any():
        raise ValueError("a picked row's target is outside the vocabulary (valids must skip ignore_index)")
    out = -(e.double()[rows] * c.double()[tgt]).sum(-1)
    if softcap is not None:
        out = torch.tanh(out / softcap) * softcap
    return out.to(out_dtype or e.dtype)
