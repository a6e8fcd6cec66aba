# Audit harness for tests/audit_public_corpus/gptqmodel/gptq_gemv.py: gptq_gemv(x, qweight, scales, qzeros, g_idx,
# out_dtype=None, bits=4) -> x @ W, W [K, N] the GPTQ weight: W[k, n] = (q(k, n) - z(g_idx[k], n)) * scales[g_idx[k],
# n] rounded to x's dtype, q the bits-wide code of row k in the int32 qweight [K // (32 // bits), N] (row k at bit
# bits * (k % pack)), z the code of column n in qzeros [G, N // pack] (GPTQ v2 zeros, qzero_format 2: no +1).
# Called as TorchLinear._forward_eager calls it on ROCm gfx950 for batch-1 decode: x contiguous (1, K), fp16 x and
# scales, K and N multiples of 32, g_idx of K entries, bits 4 (group size 32 here). The file imports only torch and
# triton: no stand-in (the entry enters torch.cuda.device(x.device), a no-op for a CPU tensor).
import torch

ENTRY = "gptq_gemv"
AUDIT_SHAPE = (1, 128, 64)  # rows of x (1 at decode), K in features, N out features
TOLERANCES = {"float32": (1e-2, 1e-2)}  # the output is fp16 (x's dtype)
BITS = 4


def make_inputs(case):
    m, k, n = case.shape
    pack = 32 // BITS
    g = 32 if k % 32 == 0 else k
    groups = max(k // g, 1)
    qw = case.randint(-2**31, 2**31 - 1, (max(k // pack, 1), n), dtype=torch.int32)
    qz = case.randint(-2**31, 2**31 - 1, (groups, max(n // pack, 1)), dtype=torch.int32)
    scales = (case.rand(groups, n) * 0.02 + 0.001).to(torch.float16)
    g_idx = (torch.arange(k, device=case.device) // g).to(torch.int32)
    return (case.randn(m, k).to(torch.float16), qw, scales, qz, g_idx)


def _codes(p, bits, along_rows):
    pack, maxq = 32 // bits, (1 << bits) - 1
    shifts = torch.arange(pack, device=p.device) * bits
    c = (p.long()[..., None] >> shifts) & maxq  # [..., pack]
    if along_rows:  # qweight [K // pack, N]: row k = word k // pack, slot k % pack
        return c.permute(0, 2, 1).reshape(p.shape[0] * pack, p.shape[1])
    return c.reshape(p.shape[0], p.shape[1] * pack)  # qzeros [G, N // pack]: column n = word n // pack, slot n % pack


def reference(x, qweight, scales, qzeros, g_idx, out_dtype=None, bits=4):
    pack = 32 // bits
    k, n = x.shape[1], qweight.shape[1]
    if qweight.shape[0] * pack != k or qzeros.shape[1] * pack != n or scales.shape[1] != n or g_idx.numel() != k:
        raise ValueError("shapes do not match the GPTQ layout")
    gi = g_idx.long()
    w = ((_codes(qweight, bits, True) - _codes(qzeros, bits, False)[gi]).double() * scales.double()[gi])
    w = w.to(x.dtype).double()
    return (x.double() @ w).to(x.dtype if out_dtype is None else out_dtype)
