# Audit harness for tests/audit_public_corpus/stanford_stk/triton_kernels.py: sdd(lhs, rhs, shape, out, offsets,
# row_indices, column_indices), in place on out [nnz, 128, 128]: out[b] = the 128 x 128 block (row_indices[b],
# column_indices[b]) of lhs @ rhs, lhs [M, K], rhs [K, N], shape = (M, N) (the sparse output's topology, blocking
# 128). Called as stk's SDD.forward (stk.ops.sdd) calls it from megablocks' sparse MLP, x1 = stk.ops.sdd(x, w1.t(),
# topo): fp16 lhs (the permuted, padded tokens), rhs the transposed view of the expert weights [N, K], out fresh, int16
# row/column indices and int32 offsets (stk's Matrix), M, N multiples of 128 and K of 32 (the entry asserts them). The
# file imports only torch and triton: no stand-in.
import torch

ENTRY = "sdd"
AUDIT_SHAPE = (256, 64, 256)  # M tokens, K hidden, N ffn columns (2 x 2 blocks of 128)
TOLERANCES = {"float32": (1e-2, 1e-2)}  # the output is fp16
B = 128


def make_inputs(case):
    m, k, n = case.shape
    mb, nb = max(m // B, 1), max(n // B, 1)
    keep = case.rand(mb, nb) < 0.6
    keep[0, 0] = True
    rows, cols = keep.nonzero(as_tuple=True)
    offsets = torch.cat([keep.new_zeros(1, dtype=torch.int32), keep.sum(1).cumsum(0).to(torch.int32)])
    out = torch.empty(rows.numel(), B, B, dtype=torch.float16, device=case.device)
    w = case.randn(n, k).to(torch.float16)
    return (case.randn(m, k).to(torch.float16), w.t(), (m, n), out, offsets, rows.to(torch.int16),
            cols.to(torch.int16))


def reference(lhs, rhs, shape, out, offsets, row_indices, column_indices):
    m, k = lhs.shape
    if rhs.shape[0] != k or tuple(shape) != (m, rhs.shape[1]) or m % B or shape[1] % B or k % 32:
        raise ValueError("M, N must be multiples of 128 and K of 32")
    full = (lhs.double() @ rhs.double()).to(out.dtype)
    for b, (r, c) in enumerate(zip(row_indices.tolist(), column_indices.tolist(), strict=True)):
        out[b] = full[r * B:(r + 1) * B, c * B:(c + 1) * B]
