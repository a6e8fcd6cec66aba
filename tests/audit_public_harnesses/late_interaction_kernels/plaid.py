# Audit harness for tests/audit_public_corpus/late_interaction_kernels/plaid.py: maxsim_residual(Q, codes, residuals,
# doc_lengths, centroids, bucket_weights, nbits) -> scores [Nq, Nd] float32: PLAID's exact re-ranking stage, fused:
# each document token t of document j is rebuilt as centroids[codes[j, t]] + bucket_weights[b] for its d bucket codes
# b (nbits each, unpacked from residuals[j, t] [d * nbits / 8] uint8), L2-normalised (normalize=True, the default and
# PLAID's convention) with the query tokens, and scores[i, j] = sum over i's tokens of the max over j's first
# doc_lengths[j] tokens. Called as a PLAID searcher re-ranks its candidate documents at inference (no requires_grad):
# Q [Nq, 32, 128] fp16 query embeddings, codes [Nd, max_Ld] int32 centroid ids padded past each document's length,
# residuals [Nd, max_Ld, 32] uint8 (nbits 2, ColBERTv2's default), doc_lengths [Nd] int64, centroids [n_centroids,
# 128] fp16 (as fast-plaid stores them), bucket_weights [4] float32 (ColBERTv2's bucket values: small offsets around
# 0). The reference follows the package's own reference (reference.maxsim_residual_reference: codes little-endian
# within each byte, bucket codes clamped to the table), in float64. Stand-ins: as forward.py's harness (a stand-in
# package late_interaction_kernels whose path is the corpus folder loads the corpus copies of _autotune.py, _utils.py,
# backward/_autotune.py and reference.py, which plaid.py imports at its end, unchanged).
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "late_interaction_kernels"
_PKG = "late_interaction_kernels"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real late_interaction_kernels is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]
    sys.modules.setdefault(_PKG + ".backward", types.ModuleType(_PKG + ".backward")).__path__ = [str(_DIR / "backward")]

ENTRY = "maxsim_residual"
AUDIT_SHAPE = (2, 32, 3, 96, 128)  # Nq queries, Lq query tokens, Nd candidate documents, max_Ld, d
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp16 Q and rebuilt tokens into the dot, fp32 accumulation
NBITS = 2
N_CENTROIDS = 64


def make_inputs(case):
    nq, lq, nd, max_ld, d = case.shape
    q = torch.nn.functional.normalize(case.randn(nq, lq, d, dtype=torch.float32), dim=-1).to(torch.float16)
    codes = case.randint(0, N_CENTROIDS, (nd, max_ld), dtype=torch.int32)
    residuals = case.randint(0, 256, (nd, max_ld, d * NBITS // 8), dtype=torch.uint8)
    doc_lengths = case.randint(1, max_ld + 1, (nd,))
    doc_lengths[0] = max_ld
    centroids = torch.nn.functional.normalize(case.randn(N_CENTROIDS, d, dtype=torch.float32), dim=-1)
    bucket_weights = torch.tensor([-0.03, -0.01, 0.01, 0.03], dtype=torch.float32, device=case.device)
    return (q, codes, residuals, doc_lengths, centroids.to(torch.float16), bucket_weights, NBITS)


def reference(Q, codes, residuals, doc_lengths, centroids, bucket_weights, nbits, *, normalize=True):
    if nbits not in (2, 4, 8) or Q.dim() != 3 or codes.dim() != 2 or residuals.dim() != 3:
        raise ValueError("nbits 2, 4 or 8; Q [Nq, Lq, d], codes [Nd, max_Ld], residuals [Nd, max_Ld, packed]")
    d = Q.shape[-1]
    if residuals.shape[-1] != (d * nbits + 7) // 8:
        raise ValueError("residuals' last dim must be d * nbits / 8")
    per_byte, mask = 8 // nbits, (1 << nbits) - 1
    rs = residuals.long()
    feat = torch.arange(d, device=Q.device)
    bucket = (rs[..., feat // per_byte] >> ((feat % per_byte) * nbits)) & mask  # little-endian within the byte
    bucket = bucket.clamp(max=bucket_weights.numel() - 1)
    emb = centroids.double()[codes.long()] + bucket_weights.double()[bucket]
    q = Q.double()
    if normalize:
        emb = torch.nn.functional.normalize(emb, dim=-1, eps=1e-12)
        q = torch.nn.functional.normalize(q, dim=-1, eps=1e-12)
    s = torch.einsum("isk,jtk->ijst", q, emb)
    valid = torch.arange(codes.shape[1], device=Q.device)[None, :] < doc_lengths.to(Q.device)[:, None]
    s = s.masked_fill(~valid[None, :, None, :], float("-inf"))
    m = s.max(dim=-1).values
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return m.sum(dim=-1).float()
