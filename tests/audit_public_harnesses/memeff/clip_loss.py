# Audit harness for tests/audit_public_corpus/memeff/clip_loss.py: _fa_backward(x, y, div_row, div_col,
# inv_temperature, grad_scale) -> (dX, dY), float32 [batch, d] each: both towers' CLIP-loss gradient rows without the
# positive-pair term, each from fa_backward_one (clip_fa_grad_kernel, bidir): with S = x @ y.T and
# e = exp2(S * inv_temperature - inv_temperature), P = e / div_row[:, None] + e / div_col[None, :],
# dX = (P * grad_scale).to(x.dtype) @ y and dY = (P.T * grad_scale).to(y.dtype) @ x, accumulated in float32. Called
# as memeff's MemoryEfficientCLIPLoss backward calls it (MemoryEfficientCLIPLossNormed.backward, taken when fa_ok:
# d_model <= 1024 on SM80/SM90): x, y the saved features (image and text towers), [batch, d] contiguous (forward
# calls .contiguous()), L2-normalised, in the training dtype (fp16 here: bf16 runs the same math, and bf16 tl.dot is
# not exact under Triton 3.9's CPU interpreter), d 512 (CLIP ViT-B); div_row / div_col the forward's float32 row /
# column sums of e (sum_exp_row, sum_exp_col, computed here in float64 from the same features); inv_temperature =
# LOG2E / 0.07 (the module's default temperature); grad_scale = inv_temperature_orig / (2 * batch) with the default
# stable=True (inv_temperature_orig = sqrt(batch / 0.07)). The kernel's dots run at
# INPUT_PRECISION (tf32 by default, MEMEFF_INPUT_PRECISION): irrelevant for 16-bit features. Stand-ins: the file's
# relative imports (._common, .distributed_clip_loss) are resolved against a stand-in package memeff whose path is
# the corpus folder (__package__ set in those files' frames), so they load the corpus copies (memeff/_common.py and
# memeff/distributed_clip_loss.py, unchanged); without a GPU, torch.cuda.get_device_capability answers (9, 0) (an
# H100: blocks 64 x 64 for d <= 512) to _common.py's fa_blocks only (torch's raises without a CUDA driver). On a GPU
# nothing is changed.
import builtins
import math
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "memeff"
_PKG = "memeff"
_FILES = ("memeff/clip_loss.py", "memeff/distributed_clip_loss.py", "memeff/_common.py")
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real memeff, where installed, is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]

if not getattr(builtins, "_p2t_memeff", False):
    _PREV_IMPORT, _PREV_CAP = builtins.__import__, torch.cuda.get_device_capability

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILES):
            globals["__package__"] = _PKG  # the files' relative imports resolve in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    def _capability(device=None):
        if not torch.cuda.is_available() and sys._getframe(1).f_code.co_filename.endswith("memeff/_common.py"):
            return (9, 0)
        return _PREV_CAP(device)

    builtins.__import__, torch.cuda.get_device_capability = _import, _capability
    builtins._p2t_memeff = True

ENTRY = "_fa_backward"
AUDIT_SHAPE = (200, 512)  # batch, d_model (CLIP ViT-B/32's embedding)
TEMPERATURE = 0.07
LOG2E = 1.4426950408889634
TOLERANCES = {"float16": (1e-2, 1e-2)}  # prob rounded to fp16 before the second dot, as the kernel does


def make_inputs(case):
    n, d = case.shape
    x = torch.nn.functional.normalize(case.randn(n, d, dtype=torch.float32).cpu(), dim=1)
    y = torch.nn.functional.normalize(x + 0.8 * torch.nn.functional.normalize(
        case.randn(n, d, dtype=torch.float32).cpu(), dim=1), dim=1)  # matched pairs correlate
    x, y = x.to(torch.float16), y.to(torch.float16)
    inv_t = LOG2E / TEMPERATURE
    e = torch.exp2(x.double() @ y.double().T * inv_t - inv_t)
    div_row, div_col = e.sum(1).float(), e.sum(0).float()
    grad_scale = math.sqrt(n / TEMPERATURE) / (2.0 * n)
    dev = case.device
    return (x.to(dev), y.to(dev), div_row.to(dev), div_col.to(dev), inv_t, grad_scale)


def _one(a, b, div_own, div_other, inv_temperature, grad_scale):
    e = torch.exp2(a.double() @ b.double().T * inv_temperature - inv_temperature)
    prob = e / div_own.double()[:, None] + e / div_other.double()[None, :]
    return ((prob * grad_scale).to(a.dtype).double() @ b.double()).float()


def reference(x, y, div_row, div_col, inv_temperature, grad_scale):
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError("x and y must be [batch, d] of one shape")
    return (_one(x, y, div_row, div_col, inv_temperature, grad_scale),
            _one(y, x, div_col, div_row, inv_temperature, grad_scale))
