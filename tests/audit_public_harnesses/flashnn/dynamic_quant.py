# Audit harness for tests/audit_public_corpus/flashnn/dynamic_quant.py: triton_dynamic_quantize(out, input, scale), in
# place: per-token symmetric int8 quantisation of activations, out[r] = round(input[r] * 127 / absmax(input[r])) (half
# away from zero), scale[r] = absmax(input[r]) / 127; the kernel computes in the input's dtype (fp16 here: the scale
# 127 / absmax and the products stay fp16, as the package's own PyTorch path, DynamicQuantize._torch_impl, divides in
# fp16). Called as flashnn's quant_gemm.DynamicQuantize._triton_impl calls it (the W8A8 path's activation quantiser,
# whose out and scale feed gemm_a8w8): out = torch.empty(input.shape, int8), scale = torch.empty(tokens, half), input
# [tokens, hidden] fp16 contiguous (asserted), hidden 4096 (a power of two: the whole row is one block). The file
# imports flashnn.kernel_backend (THREADS_PER_WARP): the stand-in package's path is the corpus folder, so that import
# loads the corpus copy (unchanged).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("flashnn", types.ModuleType("flashnn"))
sys.modules["flashnn"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "flashnn")]

ENTRY = "triton_dynamic_quantize"
AUDIT_SHAPE = (6, 4096)  # tokens, hidden
# int8 codes one step off where the fp16 product lands on the other side of a .5 boundary than the exact one (the
# kernel's and the package's own arithmetic is fp16); the fp16 scale is absmax / 127 rounded once
TOLERANCES = {"int8": (0.0, 1.0)}


def make_inputs(case):
    t, h = case.shape
    x = case.randn(t, h, dtype=torch.float16)
    return (torch.empty(t, h, dtype=torch.int8), x, torch.empty(t, dtype=torch.float16))


def reference(out, input, scale):
    xf = input.double()
    amax = xf.abs().amax(-1, keepdim=True)
    q = xf * (127.0 / amax)
    q = torch.where(q > 0, q + 0.5, q - 0.5).trunc().clamp(-128, 127)
    out.copy_(q.to(torch.int8))
    scale.copy_((amax / 127.0).squeeze(-1).to(scale.dtype))
