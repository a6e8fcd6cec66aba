# Audit harness for tests/audit_public_corpus/flashnn/rms_norm.py: triton_rmsnorm_forward(x, weight, eps) -> y
# (x's shape and dtype): y[r] = x[r] / sqrt(mean(x[r]**2) + eps) * weight, computed in fp32 and stored in x's dtype. Called as
# flashnn's norm.RMSNorm._triton_impl calls it (`triton_rmsnorm_forward(x, self.weight, self.eps).type_as(x)`, the
# module's forward on the triton backend, flashnn's default): x the hidden states of a served decoder, [tokens, hidden]
# fp16 contiguous (flashnn is a serving library: fp16/bf16 models), hidden 4096 (Llama-7B), weight [hidden] of the
# model's dtype (the module's Parameter after model.half()), eps 1e-6 (the module's default). The package's autotune
# switch (flashnn.set_autotune_triton_kernels) is off by default: one config, BLOCK_SIZE 64. The file imports
# flashnn.kernel_backend: the stand-in package's path is the corpus folder, so that import loads the corpus copy
# (flashnn/kernel_backend.py, unchanged; it imports only torch).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("flashnn", types.ModuleType("flashnn"))
sys.modules["flashnn"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "flashnn")]

ENTRY = "triton_rmsnorm_forward"
AUDIT_SHAPE = (6, 4096)  # tokens, hidden


def make_inputs(case):
    t, h = case.shape
    x = case.randn(t, h, dtype=torch.float16)
    weight = (1.0 + 0.1 * case.randn(h)).to(torch.float16)  # a trained RMSNorm weight, near 1
    return (x, weight, 1e-6)


def reference(x, weight, eps):
    xf = x.double()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.double()
    return y.to(x.dtype)
