# Audit harness for tests/audit_public_corpus/autoawq/gemm.py: awq_gemm_triton(input, qweight, scales, qzeros,
# split_k_iters) -> input @ W, W [K, N] the AWQ 4-bit weight: W[k, n] = (q(k, n) - z(k // G, n)) * scales[k // G, n],
# q and z the nibbles of the int32 qweight [K, N // 8] and qzeros [K // G, N // 8] in AWQ's packing order (column j of
# a pack at bit 4 * [0, 4, 1, 5, 2, 6, 3, 7][j]). Called as awq/modules/linear/gemm.py calls it for small batches:
# fp16 input and scales, split_k_iters=8, group size 32 here. The entry enters torch.cuda.device(qweight.device.index),
# a no-op under the interpreter (the worker). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "awq_gemm_triton"
AUDIT_SHAPE = (3, 64, 64)  # M tokens, K in features, N out features
TOLERANCES = {"float32": (1e-2, 1e-2)}  # the output is fp16 (scales' dtype)
ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def make_inputs(case):
    m, k, n = case.shape
    g = 32 if k % 32 == 0 else k
    qw = case.randint(-2**31, 2**31 - 1, (k, max(n // 8, 1)), dtype=torch.int32)
    qz = case.randint(-2**31, 2**31 - 1, (max(k // g, 1), max(n // 8, 1)), dtype=torch.int32)
    scales = (case.rand(max(k // g, 1), n) * 0.02 + 0.001).to(torch.float16)
    return (case.randn(m, k).to(torch.float16), qw, scales, qz, 8)


def _unpack(p):
    shifts = torch.tensor([4 * o for o in ORDER], device=p.device)
    return ((p.long()[..., None] >> shifts) & 0xF).reshape(p.shape[0], -1)


def reference(x, qweight, scales, qzeros, split_k_iters, *blocks):
    k, n = qweight.shape[0], qweight.shape[1] * 8
    if x.shape[-1] != k or scales.shape[1] != n or k % scales.shape[0]:
        raise ValueError("shapes do not match the AWQ layout")
    g = k // scales.shape[0]
    w = (_unpack(qweight) - _unpack(qzeros).repeat_interleave(g, 0)).double() * scales.double().repeat_interleave(g, 0)
    return (x.double() @ w).to(scales.dtype)
