# Audit harness for tests/audit_public_corpus/fbgemm_gpu/triton_jagged_bmm.py: jagged_dense_bmm(x, y, x_offsets, N,
# allow_tf32, use_fbgemm_kernel=True) -> z [sum_B, T]: for each sequence b (rows x_offsets[b] .. x_offsets[b + 1] of
# x [sum_B, D]), z's rows = x's rows @ y[b] (y [B, D, T] dense), the first min(length, N) rows; rows past N are 0.
# Registered as the CUDA and AutogradCUDA kernel of torch.ops.fbgemm.sll_jagged_dense_bmm; use_fbgemm_kernel=False is
# the call that reaches the Triton kernels (JaggedDenseBmm.apply; the default dispatches to the CUDA op
# torch.ops.fbgemm.jagged_dense_bmm, not loaded here). N is the max sequence length; allow_tf32=False, the fp32
# contract (with True the caller opts into TF32 rounding). x_offsets int64, the complete cumsum of the lengths. The
# reference is differentiable, so the grad probe runs JaggedDenseBmm.backward (its jagged-jagged kernel too). The file
# imports only torch and triton: no stand-in.
import torch

ENTRY = "jagged_dense_bmm"
AUDIT_SHAPE = (3, 40, 24, 20)  # sequences, max_seq_len N, D, T


def make_inputs(case):
    b, n, d, t = case.shape
    lengths = case.randint(0, n + 1, (b,))
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    return (case.randn(int(offsets[-1]), d), case.randn(b, d, t), offsets, n, False, False)


def reference(x, y, x_offsets, N, allow_tf32, use_fbgemm_kernel=True):
    off = x_offsets.tolist()
    if x.shape[1] != y.shape[1] or y.shape[0] != len(off) - 1:
        raise ValueError("x [sum_B, D], y [B, D, T]")
    parts = []
    for b in range(len(off) - 1):
        seg = x[off[b]:off[b + 1]]
        n = min(seg.shape[0], N)
        parts += [(seg[:n].double() @ y[b].double()).to(x.dtype), seg.new_zeros(seg.shape[0] - n, y.shape[2])]
    return torch.cat(parts) if parts else x.new_zeros(x.shape[0], y.shape[2])
