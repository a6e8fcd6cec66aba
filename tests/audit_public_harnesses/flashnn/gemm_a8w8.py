# Audit harness for tests/audit_public_corpus/flashnn/gemm_a8w8.py: triton_gemm_a8w8_forward(out, a, b, alpha_row,
# alpha_col), in place: out [M, N] = (a [M, K] int8 @ b [N, K]^T int8, int32 accumulation) * alpha_row[m] *
# alpha_col[n], stored in out's dtype. Called as flashnn's quant_gemm.GemmA8W8._triton_impl calls it (the W8A8 linear
# of a SmoothQuant model): out = torch.empty([M, N], fp16), a the int8 activations of DynamicQuantize or RMSNormDquant
# with their per-token fp16 scale as alpha_row [M], b the int8 weight [N, K] (row-major: "Matrix B must be
# transposed"), alpha_col its per-channel fp16 scale [N]; all contiguous (asserted), the scales of out's dtype
# (asserted). Decode-to-prefill token counts; M 6 here, N 1024 and K 4096 (a Llama-7B projection's K; N cut for the
# interpreter). The package's autotune switch is off (its default): one config, 128 x 64 x 128. The file imports
# flashnn.kernel_backend: the stand-in package's path is the corpus folder (the corpus copy, unchanged).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("flashnn", types.ModuleType("flashnn"))
sys.modules["flashnn"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "flashnn")]

ENTRY = "triton_gemm_a8w8_forward"
AUDIT_SHAPE = (6, 1024, 4096)  # M tokens, N out features, K in features


def make_inputs(case):
    m, n, k = case.shape
    a = case.randint(-127, 128, (m, k), dtype=torch.int8)
    b = case.randint(-127, 128, (n, k), dtype=torch.int8)
    alpha_row = (case.rand(m, low=0.5, high=1.5) / 127.0).to(torch.float16)  # absmax / 127 of each token
    alpha_col = (case.rand(n, low=0.5, high=1.5) / 127.0 / 64.0).to(torch.float16)  # weight scale per channel
    return (torch.empty(m, n, dtype=torch.float16), a, b, alpha_row, alpha_col)


def reference(out, a, b, alpha_row, alpha_col):
    acc = a.double() @ b.double().T
    out.copy_((acc * alpha_row.double()[:, None] * alpha_col.double()[None, :]).to(out.dtype))
