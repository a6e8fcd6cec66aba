# Audit harness for tests/audit_public_corpus/eigentune/triton_backend.py (eigentune's eigentune/kernels/
# triton_backend.py): up(z [N, r], w, b, b_n_dim, kind, base) -> base + scale(z) @ B^T [N, M] in z's dtype, B = b
# ([M, r] with b_n_dim 0), scale(z) = z * w for kind "diag" (w [r]), z @ w^T for "core" (w [r, r]), none for "none";
# one program per 64 rows x 128 output columns with the whole rank padded to a power of two (>= 16) in one tile, the
# scale and the residual add in the epilogue, fp32 accumulation. Called as the package's TritonBackend.forward calls
# it (the autograd function every EigenTune layer runs, eigentune.kernels.autograd; `backend="auto"` picks Triton for
# bf16/fp16 at >= 2048 tokens, kernels/policy.py): Q = down(x, Vh) [N, r], w = the layer's effective scales (the
# trainable delta, additive update) in the base output's dtype, U [out, r] the frozen left singular vectors,
# base_out = the frozen layer's output (last dim contiguous). The README's quickstart: rank 16, method "diagonal"
# (kind diag), q/k/v/o projections; here 2048 tokens (policy.TRITON_MIN_TOKENS) through a 2048-wide projection
# (the policy's measured widths 2048-8192), bf16 (training under autocast), U orthonormal, delta ~ N(0, 0.1) (a
# trained adapter; zeros at init). The reference: base + (z * w) @ U^T in float64, rounded to bf16. Imports only
# torch and triton; the entries do not ask for CUDA (TritonBackend.supports does, not the entry).
import torch

ENTRY = "up"
AUDIT_SHAPE = (2048, 2048, 16)  # tokens, output features, rank (the README's rank 16)
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}  # one bf16 rounding of the output (and of z * w, as the package's torch path)


def make_inputs(case):
    n, m, r = case.shape
    q = (0.5 * case.randn(n, r)).to(torch.bfloat16)  # down(x, Vh): x [N, in] projected on r right singular vectors
    delta = (0.1 * case.randn(r)).to(torch.bfloat16)
    u = torch.linalg.qr(case.randn(m, r))[0].to(torch.bfloat16)  # orthonormal columns (on the case's device: meta too)
    base = case.randn(n, m, dtype=torch.bfloat16)
    return (q, delta, u, 0, "diag", base)


def reference(z, w, b, b_n_dim=0, kind="diag", base=None):
    if kind not in ("diag", "core", "none"):
        raise ValueError(f"kind must be diag, core or none, got {kind!r}")
    bm = (b if b_n_dim == 0 else b.T).double()  # [M, r]
    zd = z.double()
    zd = zd * w.double() if kind == "diag" else zd @ w.double().T if kind == "core" else zd
    out = zd @ bm.T
    if base is not None:
        out = out + base.double()
    return out.to(z.dtype)
