# Audit harness for tests/audit_public_corpus/moe_ops/grouped_gemm_ops.py (moe-ops's moe_ops/grouped_gemm_ops.py):
# grouped_gemm(A, B, offsets, trans_b=True) -> C [rows, N], C[offsets[e]:offsets[e + 1]] = A[offsets[e]:offsets[e + 1]]
# @ B[e].T for each expert e (fp32 accumulation, stored in A's dtype), the sm80 path (GroupedGEMMAutograd; the
# package's __init__ exports the sm90 wrapper, which takes this same gmm_fwd_raw without TMA). Called as the package's
# MoE layer (tests/test_correctness.py, _SingleGpuMoE.forward) and README call it: A = permute's output [tokens * K,
# d_model] bf16 in expert order, B = the experts' gate (or up) weights [E, hidden, d_model] bf16 (trans_b=True),
# offsets = permute's int32 [E + 1] (offsets[0] = 0, offsets[E] = rows). Mixtral's 8 experts, top-2 of 48 tokens (96
# rows, one expert left empty, as routing can), d_model 128 and hidden 256 (cut for the interpreter). The reference is
# the per-expert product in float64, rounded to A's dtype. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "grouped_gemm"
AUDIT_SHAPE = (96, 128, 256, 8)  # rows (tokens * K), d_model K, hidden N, experts E
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}  # bf16 operands, fp32 accumulation over d_model, one bf16 rounding


def make_inputs(case):
    m, k, n, e = case.shape
    a = case.randn(m, k, dtype=torch.bfloat16)
    b = (case.randn(e, n, k, dtype=torch.float32) / k ** 0.5).to(torch.bfloat16)
    counts = case.randint(0, 2 * m // max(1, e) + 1, (e,))
    counts[-1] = 0  # an expert no token was routed to
    counts = (counts.double() * m / max(1, int(counts.sum()))).floor().long()
    counts[0] += m - int(counts.sum())  # the rows add up to m
    offsets = torch.zeros(e + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(counts, 0)
    return (a, b, offsets.to(a.device))


def reference(A, B, offsets, trans_b=True):
    if offsets.numel() != B.shape[0] + 1 or int(offsets[-1]) != A.shape[0]:
        raise ValueError("offsets [E + 1] from 0 to A's rows")
    out = torch.empty(A.shape[0], B.shape[1] if trans_b else B.shape[2], dtype=torch.float64, device=A.device)
    for e in range(B.shape[0]):
        lo, hi = int(offsets[e]), int(offsets[e + 1])
        w = B[e].double().T if trans_b else B[e].double()
        out[lo:hi] = A[lo:hi].double() @ w
    return out.to(A.dtype)
