# Audit harness for tests/audit_public_corpus/adasplash/triton_entmax.py: triton_entmax(x, alpha=1.5, n_iter=10,
# fast_math=True) -> y, alpha-entmax over the last dimension: y = [(alpha - 1) x - tau]_+ ** (1 / (alpha - 1)) with the
# threshold tau such that each row sums to 1 (Halley iterations bracketed by bisection, n_iter of them); an autograd
# Function (backward: the entmax Jacobian-vector product). Called as adasplash's public triton_entmax_v1 (and the
# docstring's example) calls it: x [rows, N] float32 scores (x.is_contiguous() is asserted), alpha 1.5, the defaults
# n_iter 10 and fast_math True (libdevice.fast_powf). The reference below solves for tau by 200 bisection steps in
# float64. The file imports only torch and triton (TRITON_INTERPRET=1 turns its autotune off: BLOCK_N is then the
# kernel's only free constexpr... it has no default, see the labelling notes).
import torch

ENTRY = "triton_entmax"
AUDIT_SHAPE = (128, 256)  # rows, N (the docstring's example)
TOLERANCES = {"float32": (1e-4, 1e-5)}  # 10 Halley steps converge to float32 precision on these rows


def make_inputs(case):
    r, n = case.shape
    return (case.randn(r, n, dtype=torch.float32), 1.5, 10, True)


def reference(x, alpha=1.5, n_iter=10, fast_math=True):
    if alpha <= 1:
        raise ValueError("alpha must be > 1")
    z = x.double() * (alpha - 1)
    hi = z.max(-1, keepdim=True).values
    lo = hi - 1.0
    p = 1.0 / (alpha - 1)
    for _ in range(200):
        tau = (lo + hi) / 2
        s = (z - tau).clamp(min=0).pow(p).sum(-1, keepdim=True)
        lo, hi = torch.where(s > 1, tau, lo), torch.where(s > 1, hi, tau)
    return (z - (lo + hi) / 2).clamp(min=0).pow(p).to(x.dtype)
