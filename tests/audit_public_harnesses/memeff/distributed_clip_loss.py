# Audit harness for tests/audit_public_corpus/memeff/distributed_clip_loss.py: _launch_denom(x_block, y_block,
# sum_exp_row, sum_exp_col, inv_temperature) -> None, in place: with e = exp2(x_block @ y_block.T * inv_temperature -
# inv_temperature), sum_exp_row += e.sum(1) and sum_exp_col += e.sum(0) (float32 buffers, added with float
# tl.atomic_add by every 128 x 128 block). Called as memeff's single-GPU MemoryEfficientCLIPLoss forward calls it
# (clip_loss.MemoryEfficientCLIPLossNormed.forward; DistributedMemoryEfficientCLIPLoss's ring does the same per shard
# pair): x_block, y_block the image and text features [batch, d] contiguous (forward calls .contiguous()),
# L2-normalised, in the training dtype (fp16 here: bf16 runs the same math, and bf16 tl.dot is not exact under Triton
# 3.9's CPU interpreter), d 512 (CLIP ViT-B); sum_exp_row, sum_exp_col fresh torch.zeros(batch) float32;
# inv_temperature = LOG2E / 0.07 (the module's default temperature). batch 300 here: three 128-row blocks a side, the
# last ragged. The dots run at INPUT_PRECISION (tf32 by default): irrelevant for 16-bit features. Stand-ins: as
# tests/audit_public_harnesses/memeff/clip_loss.py (the file's `from ._common import ...` resolves in a stand-in
# package memeff whose path is the corpus folder; torch.cuda.get_device_capability answers (9, 0) to _common.py
# without a GPU; _launch_denom reads neither the device nor its capability). On a GPU nothing is changed.
import builtins
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

ENTRY = "_launch_denom"
AUDIT_SHAPE = (300, 512)  # batch, d_model
TEMPERATURE = 0.07
LOG2E = 1.4426950408889634
TOLERANCES = {"float16": (1e-4, 1e-5)}  # float32 sums of float32 exponentials, in a different order


def make_inputs(case):
    n, d = case.shape
    x = torch.nn.functional.normalize(case.randn(n, d, dtype=torch.float32).cpu(), dim=1)
    y = torch.nn.functional.normalize(x + 0.8 * torch.nn.functional.normalize(
        case.randn(n, d, dtype=torch.float32).cpu(), dim=1), dim=1)  # matched pairs correlate
    dev = case.device
    zeros = [torch.zeros(n, dtype=torch.float32, device=dev) for _ in range(2)]
    return (x.to(torch.float16).to(dev), y.to(torch.float16).to(dev), zeros[0], zeros[1], LOG2E / TEMPERATURE)


def reference(x_block, y_block, sum_exp_row, sum_exp_col, inv_temperature):
    if x_block.ndim != 2 or y_block.ndim != 2 or x_block.shape[1] != y_block.shape[1]:
        raise ValueError("x_block [n_i, d] and y_block [n_j, d]")
    e = torch.exp2(x_block.double() @ y_block.double().T * inv_temperature - inv_temperature)
    sum_exp_row.copy_((sum_exp_row.double() + e.sum(1)).float())
    sum_exp_col.copy_((sum_exp_col.double() + e.sum(0)).float())
