# Audit harness for tests/audit_public_corpus/flashnn/gemm_a16w8.py: triton_gemm_a16w8_forward(out, act, quant_w,
# scale_w, bias=None, zero_points=None), in place: out [M, N] = act [M, K] @ (quant_w [N, K] int8 * scale_w)^T (+ bias),
# weight-only int8 (per-channel scale [N], or one scale per group of K when scale_w is [K / group, N]); split-K: SPLIT_K
# programs per output tile add their partial sums to out with tl.atomic_add (the launch's pre_hook zeroes out first).
# Called as flashnn's quant_gemm.GemmWeightOnly._triton_impl calls it for int8 weights: triton_out = torch.zeros([M, N],
# fp16), act fp16 [M, K] contiguous (asserted), quant_w int8 [N, K] contiguous (asserted), scale_w the per-channel fp16
# scale [N] (quant_w.size(0) == scale_w.size(-1): the int8 branch), no bias, no zero points (symmetric). M 5 (decode-
# sized batches: weight-only GEMMs serve decoding), N 512 (cut for the interpreter), K 4096 (Llama-7B). The
# package's autotune switch is off (its default): BLOCK 16 x 32 x 64, SPLIT_K 4. The file imports
# flashnn.kernel_backend: the stand-in package's path is the corpus folder (the corpus copy, unchanged).
import sys
import types
from pathlib import Path

import torch

sys.modules.setdefault("flashnn", types.ModuleType("flashnn"))
sys.modules["flashnn"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "flashnn")]

ENTRY = "triton_gemm_a16w8_forward"
AUDIT_SHAPE = (5, 512, 4096)  # M tokens, N out features, K in features
# fp16 output of a split-K sum: each of the 4 partial sums is rounded to fp16 and added to out in fp16 (by design of
# the kernel: out is the accumulator), up to ~4 fp16 roundings of the result instead of one
TOLERANCES = {"float16": (4e-3, 4e-3)}


def make_inputs(case):
    m, n, k = case.shape
    act = (case.randn(m, k) / 8.0).to(torch.float16)
    quant_w = case.randint(-127, 128, (n, k), dtype=torch.int8)
    scale_w = (case.rand(n, low=0.5, high=1.5) / 127.0 / 16.0).to(torch.float16)  # absmax / 127 per channel
    return (torch.zeros(m, n, dtype=torch.float16), act, quant_w, scale_w)


def reference(out, act, quant_w, scale_w, bias=None, zero_points=None):
    w = quant_w.double()
    if zero_points is not None:
        w = w - zero_points.double().reshape(-1, 1)
    y = act.double() @ (w * scale_w.double().reshape(-1, 1)).T
    if bias is not None:
        y = y + bias.double()
    out.copy_(y.to(out.dtype))  # the config's pre_hook zeroes out before the split-K partial sums are added
