# Audit harness for tests/audit_public_corpus/flashnn/rms_norm_dquant.py: triton_rmsnorm_dquant_forward(x, weight, eps)
# -> (y int8 [x's shape], scale [x's leading dims] in x's dtype): RMSNorm (fp32) times weight, then a dynamic per-token
# symmetric int8 quantisation: scale = absmax(norm row) / 127, y = round(norm / scale) (the kernel rounds half away from
# zero; the package's PyTorch path, RMSNormDquant._norm_dquant, rounds half to even: they differ only on exact ties).
# Called as flashnn's norm.RMSNormDquant._triton_impl calls it (the SmoothQuant-style W8A8 path: the norm feeds an int8
# GEMM, gemm_a8w8, with the scale as its alpha_row): x [tokens, hidden] fp16 contiguous, hidden 4096, weight [hidden]
# fp16 (the module's Parameter after model.half()), eps 1e-6. The package's autotune switch is off (its default): one
# config, BLOCK_SIZE 64. The file imports flashnn.kernel_backend: the stand-in package's path is the corpus folder, so
# that import loads the corpus copy (unchanged).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("flashnn", types.ModuleType("flashnn"))
sys.modules["flashnn"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "flashnn")]

ENTRY = "triton_rmsnorm_dquant_forward"
AUDIT_SHAPE = (6, 4096)  # tokens, hidden
# int8 codes: one step where the fp32 row sum of squares, summed in another order, moves a value across a .5 boundary
TOLERANCES = {"int8": (0.0, 1.0)}


def make_inputs(case):
    t, h = case.shape
    x = case.randn(t, h, dtype=torch.float16)
    weight = (1.0 + 0.1 * case.randn(h)).to(torch.float16)
    return (x, weight, 1e-6)


def reference(x, weight, eps):
    xf = x.float()
    norm = xf * (1.0 / torch.sqrt(xf.pow(2).mean(-1, keepdim=True) + eps)) * weight.float()
    scale = norm.abs().amax(-1, keepdim=True) / 127.0
    q = norm / scale
    q = torch.where(q > 0, q + 0.5, q - 0.5).trunc().clamp(-128, 127)  # half away from zero, as the kernel
    return q.to(torch.int8), scale.squeeze(-1).to(x.dtype)
