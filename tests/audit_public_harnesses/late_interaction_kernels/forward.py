# Audit harness for tests/audit_public_corpus/late_interaction_kernels/forward.py: maxsim_forward(Q, D, q_mask, d_mask)
# -> (scores, None): the ColBERT late-interaction score scores[i, j] = sum over the query tokens s of max over the doc
# tokens t with d_mask[j, t] of Q[i, s] . D[j, t] (float32 [Nq, Nd]). Called as the package's CUDA path calls it for
# PyLate's colbert_scores (pylate_compat._dispatch_maxsim -> maxsim -> _maxsim_cross -> _run_forward: the same launch,
# normalize=False, no argmax at inference): Q [Nq, 32, 128] and D [Nd, Ld, 128] unit-normalised token embeddings (the
# encoder emits unit vectors; PyLate does not normalise), a ColBERT query length of 32, documents padded to Ld 180
# (ColBERTv2's doc_maxlen) with a bool d_mask marking each document's real tokens, fp16 (a half-precision encoder;
# float32 embeddings are rounded to fp16 for the dot by design: pick_compute_dtype). Stand-ins: the file imports
# late_interaction_kernels._autotune and ._utils; a stand-in package late_interaction_kernels whose path is the corpus
# folder (late_interaction_kernels.backward likewise, so its __init__, which imports the backward kernels, is not run)
# loads the corpus copies, unchanged. Without a GPU, detect_gpu() answers "generic" and forward_configs() gives the
# five small-block configs (the audit's worker takes the first); maxsim_forward's small-shape bypass (Nq * Nd <= 500,
# Lq * Ld <= 200,000) launches the kernel's .fn with BLOCK_Q 32, BLOCK_D 64 at the audit shape, on a GPU too.
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "late_interaction_kernels"
_PKG = "late_interaction_kernels"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real late_interaction_kernels is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]
    sys.modules.setdefault(_PKG + ".backward", types.ModuleType(_PKG + ".backward")).__path__ = [str(_DIR / "backward")]

ENTRY = "maxsim_forward"
AUDIT_SHAPE = (2, 32, 3, 180, 128)  # Nq queries, Lq query tokens, Nd documents, Ld padded doc tokens, d
TOLERANCES = {"float16": (1e-3, 1e-3)}  # fp16 products, fp32 dot accumulation and sum over 32 query tokens


def make_inputs(case):
    nq, lq, nd, ld, d = case.shape
    q = torch.nn.functional.normalize(case.randn(nq, lq, d, dtype=torch.float32), dim=-1)
    docs = torch.nn.functional.normalize(case.randn(nd, ld, d, dtype=torch.float32), dim=-1)
    lengths = case.randint(max(1, ld // 3), ld + 1, (nd,))
    lengths[0] = ld  # one full document
    d_mask = torch.arange(ld, device=lengths.device)[None, :] < lengths[:, None]
    return (q.to(torch.float16), docs.to(torch.float16), None, d_mask.to(case.device))


def reference(Q, D, q_mask=None, d_mask=None, *, save_argmax=False, normalize=False):
    if Q.dim() != 3 or D.dim() != 3 or Q.shape[-1] != D.shape[-1]:
        raise ValueError("Q [Nq, Lq, d] and D [Nd, Ld, d] share d")
    q, dd = Q.double(), D.double()
    if normalize:
        q, dd = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(dd, dim=-1)
    s = torch.einsum("isk,jtk->ijst", q, dd)  # [Nq, Nd, Lq, Ld]
    if d_mask is not None:
        s = s.masked_fill(~d_mask.bool()[None, :, None, :], float("-inf"))
    m = s.max(dim=-1).values
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    if q_mask is not None:
        m = m * q_mask.bool()[:, None, :]
    return m.sum(dim=-1).float(), None
