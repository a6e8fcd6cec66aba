# Audit harness for tests/audit_public_corpus/fbgemm_gpu/triton_jagged_dense_elementwise_mul_jagged_out.py:
# jagged_dense_elementwise_mul_jagged_out(x, y, x_seq_lengths, x_offsets, max_seq_len) -> z [sum_B L_i^2]: x holds
# one L_i x L_i matrix per sequence, flattened row-major at x_offsets[i] (the complete cumsum of L_i^2), y [max_seq_len,
# max_seq_len] a dense matrix shared by all sequences; z's matrix i = x's matrix i * y[:L_i, :L_i] elementwise
# (fbgemm's CPU autograd kernel, the same op's CPU implementation). Registered as the CUDA and AutogradCUDA kernel of
# torch.ops.fbgemm.sll_jagged_dense_elementwise_mul_jagged_out; JaggedDenseElementwiseMul.backward gives x's gradient
# only (y is not trained, as in the CPU kernel). L_i <= max_seq_len, lengths and offsets int64. The reference is
# differentiable, so the grad probe runs the backward. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "jagged_dense_elementwise_mul_jagged_out"
AUDIT_SHAPE = (3, 40)  # sequences, max_seq_len (two 32-wide column blocks)


def make_inputs(case):
    b, n = case.shape
    lengths = case.randint(0, n + 1, (b,))
    offsets = torch.cat([lengths.new_zeros(1), (lengths * lengths).cumsum(0)])
    return (case.randn(int(offsets[-1])), case.randn(n, n), lengths, offsets, n)


def reference(x, y, x_seq_lengths, x_offsets, max_seq_len):
    off, lens = x_offsets.tolist(), x_seq_lengths.tolist()
    if max(lens, default=0) > min(max_seq_len, y.shape[0], y.shape[1]):
        raise ValueError("sequence lengths must be at most max_seq_len")
    parts = [(x[off[i]:off[i + 1]].view(n, n) * y[:n, :n].detach()).flatten() for i, n in enumerate(lens)]
    return torch.cat(parts) if parts else x.clone()
