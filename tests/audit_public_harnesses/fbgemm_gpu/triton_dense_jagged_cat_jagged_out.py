# Audit harness for tests/audit_public_corpus/fbgemm_gpu/triton_dense_jagged_cat_jagged_out.py:
# dense_jagged_cat_jagged_out(a, b, b_offsets, max_seq_len) -> (c, c_offsets): a [B] one value per sequence, b the 1-D
# jagged values [sum_B] (sequence i at b_offsets[i] .. b_offsets[i + 1]); c [B + sum_B] puts a[i] in front of each
# sequence, c_offsets = b_offsets + arange(B + 1) (fbgemm's CPU kernel cpu_dense_jagged_cat_jagged_out, the same op's
# CPU implementation). Registered as the CUDA kernel of torch.ops.fbgemm.sll_dense_jagged_cat_jagged_out, called with
# contiguous a and b (it asserts so), b_offsets int64 the complete cumsum of the lengths, max_seq_len at least the
# longest sequence. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "dense_jagged_cat_jagged_out"
AUDIT_SHAPE = (5, 200)  # sequences, max_seq_len (more than one 128-value block per sequence)


def make_inputs(case):
    b, n = case.shape
    lengths = case.randint(0, n + 1, (b,))
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    return (case.randn(b), case.randn(int(offsets[-1])), offsets, n)


def reference(a, b, b_offsets, max_seq_len):
    off = b_offsets.tolist()
    if a.shape[0] != len(off) - 1:
        raise ValueError("a has one value per sequence")
    c = torch.cat([torch.cat((a[i:i + 1], b[off[i]:off[i + 1]])) for i in range(a.shape[0])] or [a[:0]])
    return c, b_offsets + torch.arange(b_offsets.shape[0], dtype=b_offsets.dtype, device=b_offsets.device)
