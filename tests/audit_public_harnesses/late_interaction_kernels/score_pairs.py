# Audit harness for tests/audit_public_corpus/late_interaction_kernels/score_pairs.py: score_pairs_packed(Q_packed,
# D_packed, cu_seqlens_q, cu_seqlens_d, pair_q_idx, pair_d_idx) -> scores [num_pairs] float32: the ColBERT score of
# each listed (query, document) pair of a packed batch (scores[k] = sum over query pair_q_idx[k]'s tokens of the max
# over document pair_d_idx[k]'s tokens of the dot product). Called as the package's reranker calls it at inference
# (padded.maxsim_padded on CUDA: pack_padded of queries [B, Lq, d] and candidates [B, C, Ld, d], then pair_q_idx[b * C
# + c] = b, pair_d_idx[b * C + c] = b * C + c, int32): B 2 queries of up to 32 tokens, C 3 candidates each of 1..180
# tokens, d 128, unit-normalised fp16, int32 cu_seqlens. maxsim_padded also passes max_seqlen_q / max_seqlen_d
# (keyword-only, fetched by pack_padded with one .item()); the harness's positional call leaves them to the function,
# which reads them from cu_seqlens (one .item() per side: its documented fallback). Stand-ins: as forward.py's
# harness (a stand-in package late_interaction_kernels whose path is the corpus folder loads the corpus copies of
# _autotune.py, _utils.py and backward/_autotune.py, unchanged).
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "late_interaction_kernels"
_PKG = "late_interaction_kernels"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real late_interaction_kernels is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]
    sys.modules.setdefault(_PKG + ".backward", types.ModuleType(_PKG + ".backward")).__path__ = [str(_DIR / "backward")]

ENTRY = "score_pairs_packed"
AUDIT_SHAPE = (2, 3, 128)  # B queries, C candidates per query, d
TOLERANCES = {"float16": (1e-3, 1e-3)}  # fp16 products, fp32 dot accumulation and sum


def _cu(lengths):
    return torch.cat([lengths.new_zeros(1), lengths.cumsum(0)]).to(torch.int32)


def make_inputs(case):
    b, c, d = case.shape
    lq = case.randint(8, 33, (b,))
    lq[0] = 32
    ld = case.randint(1, 181, (b * c,))
    ld[0] = 180
    q = torch.nn.functional.normalize(case.randn(int(lq.sum()), d, dtype=torch.float32), dim=-1)
    docs = torch.nn.functional.normalize(case.randn(int(ld.sum()), d, dtype=torch.float32), dim=-1)
    pair_q = torch.arange(b, dtype=torch.int32).repeat_interleave(c)
    pair_d = torch.arange(b * c, dtype=torch.int32)
    return (q.to(torch.float16), docs.to(torch.float16), _cu(lq).to(case.device), _cu(ld).to(case.device),
            pair_q.to(case.device), pair_d.to(case.device))


def reference(Q_packed, D_packed, cu_seqlens_q, cu_seqlens_d, pair_q_idx, pair_d_idx, *, max_seqlen_q=None,
              max_seqlen_d=None):
    if Q_packed.dim() != 2 or D_packed.dim() != 2 or Q_packed.shape[1] != D_packed.shape[1]:
        raise ValueError("Q_packed [sum Lq, d] and D_packed [sum Ld, d] share d")
    if pair_q_idx.shape != pair_d_idx.shape or pair_q_idx.dim() != 1:
        raise ValueError("pair_q_idx and pair_d_idx: matching 1-D tensors")
    cq, cd = cu_seqlens_q.tolist(), cu_seqlens_d.tolist()
    out = torch.zeros(pair_q_idx.numel(), dtype=torch.float64, device=Q_packed.device)
    for k, (i, j) in enumerate(zip(pair_q_idx.tolist(), pair_d_idx.tolist())):
        qi, dj = Q_packed[cq[i]:cq[i + 1]].double(), D_packed[cd[j]:cd[j + 1]].double()
        if len(qi) and len(dj):
            out[k] = (qi @ dj.T).max(dim=1).values.sum()
    return out.float()
