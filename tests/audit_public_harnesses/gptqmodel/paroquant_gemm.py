# Audit harness for tests/audit_public_corpus/gptqmodel/paroquant_gemm.py: paroquant_gemm_triton_decode(input,
# qweight, scales, qzeros) -> input @ W, W [K, N] the ParoQuant (AWQ-packed) 4-bit weight: W[k, n] = (q(k, n) -
# z(k // G, n)) * scales[k // G, n], q and z the nibbles of the int32 qweight [K, N // 8] and qzeros [K // G, N // 8]
# in AWQ's packing order (column j of a pack at bit 4 * [0, 4, 1, 5, 2, 6, 3, 7][j]). Called as
# ParoQuantTritonLinear._forward_triton_decode calls it for small batches: the rotated fp16 activations [rows, K]
# (a fresh tensor from the input rotation), the layer's fp16 scales, group size 32 here; fp32 accumulation (the
# GPTQMODEL_FP32_ACCUM default). The file imports gptqmodel.utils.env.env_flag, not installed here: a stand-in (the
# package's own definition, reading the environment variable with its default).
import os
import sys
import types

import torch


def env_flag(name, default="0"):  # gptqmodel/utils/env.py
    value = os.getenv(name)
    if value is None:
        if default is None:
            return False
        if isinstance(default, bool):
            return default
        value = default
    return str(value).strip().lower() in {"1", "true", "yes", "on", "y"}


for _name in ("gptqmodel", "gptqmodel.utils", "gptqmodel.utils.env"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["gptqmodel.utils.env"].env_flag = env_flag

ENTRY = "paroquant_gemm_triton_decode"
AUDIT_SHAPE = (3, 64, 64)  # M rows, K in features, N out features
TOLERANCES = {"float32": (1e-2, 1e-2)}  # the output is fp16 (input's dtype)
ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def make_inputs(case):
    m, k, n = case.shape
    g = 32 if k % 32 == 0 else k
    qw = case.randint(-2**31, 2**31 - 1, (k, max(n // 8, 1)), dtype=torch.int32)
    qz = case.randint(-2**31, 2**31 - 1, (max(k // g, 1), max(n // 8, 1)), dtype=torch.int32)
    scales = (case.rand(max(k // g, 1), n) * 0.02 + 0.001).to(torch.float16)
    return (case.randn(m, k).to(torch.float16), qw, scales, qz)


def _unpack(p):
    shifts = torch.tensor([4 * o for o in ORDER], device=p.device)
    return ((p.long()[..., None] >> shifts) & 0xF).reshape(p.shape[0], -1)


def reference(x, qweight, scales, qzeros):
    k, n = qweight.shape[0], qweight.shape[1] * 8
    if x.shape[-1] != k or scales.shape[1] != n or k % scales.shape[0] or qzeros.shape[0] != scales.shape[0]:
        raise ValueError("shapes do not match the AWQ layout")
    g = k // scales.shape[0]
    w = (_unpack(qweight) - _unpack(qzeros).repeat_interleave(g, 0)).double() * scales.double().repeat_interleave(g, 0)
    return (x.double() @ w.to(x.dtype).double()).to(x.dtype)
