# Audit harness for tests/audit_public_corpus/fbgemm_gpu/triton_jagged_softmax.py: jagged_softmax(x, x_offsets,
# max_seq_len, use_fbgemm_kernel=True) -> y [sum_B, H]: for each sequence b (rows x_offsets[b] .. x_offsets[b + 1] of
# x [sum_B, H]) and each head, the softmax over its first min(length, max_seq_len) rows; rows past max_seq_len are 0.
# Registered as the CUDA and AutogradCUDA kernel of torch.ops.fbgemm.sll_jagged_softmax; use_fbgemm_kernel=False is
# the call that reaches the Triton kernels (JaggedSoftmax.apply; the default dispatches to the CUDA op
# torch.ops.fbgemm.jagged_softmax, not loaded here). x_offsets int64, the complete cumsum of the lengths (fbgemm's
# asynchronous_complete_cumsum); max_seq_len at least the longest sequence. The reference is differentiable, so the
# grad probe runs JaggedSoftmax.backward. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "jagged_softmax"
AUDIT_SHAPE = (4, 20, 3)  # sequences, max_seq_len, heads


def make_inputs(case):
    b, n, h = case.shape
    lengths = case.randint(0, n + 1, (b,))
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    return (case.randn(int(offsets[-1]), h), offsets, n, False)


def reference(x, x_offsets, max_seq_len, use_fbgemm_kernel=True):
    off = x_offsets.tolist()
    parts = []
    for b in range(len(off) - 1):
        seg = x[off[b]:off[b + 1]]
        n = min(seg.shape[0], max_seq_len)
        parts += [torch.softmax(seg[:n].double(), dim=0).to(x.dtype), torch.zeros_like(seg[n:])]
    return torch.cat(parts) if parts else torch.zeros_like(x)
