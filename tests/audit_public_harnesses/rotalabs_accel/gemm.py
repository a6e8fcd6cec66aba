# Audit harness for tests/audit_public_corpus/rotalabs_accel/gemm.py (rotalabs-accel's rotalabs_accel/kernels/gemm.py):
# int8_gemm(x, weight_int8, scale, bias, weight_transposed) -> x @ (weight_int8 * scale[:, None]).T + bias, the W8A16
# GEMM (int8 weights dequantised in registers, fp32 accumulation, fp16 output). Called as the package's
# Int8Linear.forward calls it after Int8Linear.from_linear(linear) of an fp16 model (the docstring: "FP16 activation
# tensor"): x the hidden states [batch, seq, in_features] fp16, weight_int8 [out, in] int8 and scale [out] float32 from
# quantize_weight_per_channel (symmetric, max |w| / 127 per output row), bias None (Llama's projections have none),
# weight_transposed the buffer quantize_weights fills, weight_int8.t().contiguous() [in, out]. A q_proj-like layer
# cut for the interpreter (in 2048, out 1024), 1 x 6 tokens. The reference dequantises in float64.
# Stand-ins: the file imports rotalabs_accel.quantization.symmetric (used by the PyTorch fallback and Int8Linear): a
# stand-in package rotalabs_accel whose path is the corpus folder (and rotalabs_accel.quantization, so the package's
# __init__ files, not copied, are never run) loads the corpus copy (rotalabs_accel/quantization/symmetric.py,
# unchanged, static-only). int8_gemm takes its Triton path only for CUDA tensors (`x.is_cuda and weight_int8.is_cuda
# and scale.is_cuda`): is_cuda is answered yes for the audited file's own frames only (as lion-pytorch's stand-in).
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "rotalabs_accel"
for _name, _path in (("rotalabs_accel", _DIR), ("rotalabs_accel.quantization", _DIR / "quantization")):
    if getattr(sys.modules.get(_name), "__file__", None) is None:  # a real rotalabs_accel is left alone
        sys.modules.setdefault(_name, types.ModuleType(_name)).__path__ = [str(_path)]

_FILE = "rotalabs_accel/gemm.py"
_FLAG = "_p2t_rotalabs_gemm"
_IS_CUDA = torch.Tensor.is_cuda
_TRAMPOLINES: dict = {}


def _as_caller(fget, self, filename):
    """An earlier harness's stand-in (a property that looks one frame up for its own file) asked from a frame that
    carries the real caller's file name, so that stand-ins chained in one process each still see their file."""
    t = _TRAMPOLINES.get(filename)
    if t is None:
        ns: dict = {}
        exec(compile("def _t(fget, self):\n    return fget(self)\n", filename, "exec"), ns)  # noqa: S102
        t = _TRAMPOLINES[filename] = ns["_t"]
    return t(fget, self)


def _is_cuda(self):
    filename = sys._getframe(1).f_code.co_filename
    if filename.endswith(_FILE):
        return True
    if isinstance(_IS_CUDA, property):  # another harness's stand-in, installed before this one
        return _as_caller(_IS_CUDA.fget, self, filename)
    return _IS_CUDA.__get__(self)


if not getattr(torch.Tensor, _FLAG, False):
    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "int8_gemm"
AUDIT_SHAPE = (1, 6, 2048, 1024)  # batch, seq, in_features K, out_features N
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 accumulation over K, one fp16 rounding


def make_inputs(case):
    b, s, k, n = case.shape
    x = case.randn(b, s, k, dtype=torch.float16)
    w = case.randn(n, k, dtype=torch.float32) / k ** 0.5  # a Linear's weight scale
    scale = (w.abs().amax(dim=1) / 127.0).clamp_min(1e-8)  # quantize_weight_per_channel: symmetric, per output row
    w_int8 = torch.round(w / scale[:, None]).clamp(-128, 127).to(torch.int8)
    return (x, w_int8, scale.float(), None, w_int8.t().contiguous())


def reference(x, weight_int8, scale, bias=None, weight_transposed=None, scale_fp16=None, use_cublas=None):
    if weight_int8.dtype != torch.int8 or weight_int8.shape != (scale.shape[0], x.shape[-1]):
        raise ValueError("weight_int8 [N, K] int8, scale [N]")
    y = x.double() @ (weight_int8.double() * scale.double()[:, None]).T
    if bias is not None:
        y = y + bias.double()
    return y.to(torch.float16)
