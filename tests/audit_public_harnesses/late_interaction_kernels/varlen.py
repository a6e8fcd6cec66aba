# Audit harness for tests/audit_public_corpus/late_interaction_kernels/varlen.py: maxsim_varlen(Q_packed, D_packed,
# cu_seqlens_q, cu_seqlens_d) -> scores [Nq, Nd] float32: the ColBERT late-interaction score of every (query, document)
# of a packed batch (FlashAttention's varlen convention): query i is rows cu_seqlens_q[i]:cu_seqlens_q[i + 1] of
# Q_packed [sum Lq_i, d], document j rows cu_seqlens_d[j]:cu_seqlens_d[j + 1] of D_packed [sum Ld_j, d]; scores[i, j]
# = sum over i's tokens of the max over j's tokens of the dot product (0 when either is empty). Called as a reranker
# calls it at inference (no requires_grad: the forward kernel only): unit-normalised fp16 token embeddings, d 128,
# query lengths up to 32, document lengths 1..180 (ColBERTv2's query_maxlen and doc_maxlen), int32 cu_seqlens built
# by a cumsum of the lengths, max_seqlen_q / max_seqlen_d left to the function (it reads them from cu_seqlens: one
# .item() each). Stand-ins: as forward.py's harness (a stand-in package late_interaction_kernels whose path is the
# corpus folder loads the corpus copies of _autotune.py, _utils.py and backward/_autotune.py, unchanged).
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "late_interaction_kernels"
_PKG = "late_interaction_kernels"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real late_interaction_kernels is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]
    sys.modules.setdefault(_PKG + ".backward", types.ModuleType(_PKG + ".backward")).__path__ = [str(_DIR / "backward")]

ENTRY = "maxsim_varlen"
AUDIT_SHAPE = (3, 4, 128)  # Nq queries, Nd documents, d
TOLERANCES = {"float16": (1e-3, 1e-3)}  # fp16 products, fp32 dot accumulation and sum


def _cu(lengths):
    return torch.cat([lengths.new_zeros(1), lengths.cumsum(0)]).to(torch.int32)


def make_inputs(case):
    nq, nd, d = case.shape
    lq = case.randint(8, 33, (nq,))
    lq[0] = 32  # a full ColBERT query
    ld = case.randint(1, 181, (nd,))
    ld[0] = 180
    q = torch.nn.functional.normalize(case.randn(int(lq.sum()), d, dtype=torch.float32), dim=-1)
    docs = torch.nn.functional.normalize(case.randn(int(ld.sum()), d, dtype=torch.float32), dim=-1)
    return (q.to(torch.float16), docs.to(torch.float16), _cu(lq).to(case.device), _cu(ld).to(case.device))


def reference(Q_packed, D_packed, cu_seqlens_q, cu_seqlens_d, max_seqlen_q=None, max_seqlen_d=None):
    if Q_packed.dim() != 2 or D_packed.dim() != 2 or Q_packed.shape[1] != D_packed.shape[1]:
        raise ValueError("Q_packed [sum Lq, d] and D_packed [sum Ld, d] share d")
    cq, cd = cu_seqlens_q.tolist(), cu_seqlens_d.tolist()
    out = torch.zeros(len(cq) - 1, len(cd) - 1, dtype=torch.float64, device=Q_packed.device)
    for i in range(len(cq) - 1):
        qi = Q_packed[cq[i]:cq[i + 1]].double()
        for j in range(len(cd) - 1):
            dj = D_packed[cd[j]:cd[j + 1]].double()
            if len(qi) and len(dj):
                out[i, j] = (qi @ dj.T).max(dim=1).values.sum()
    return out.float()
