# Audit harness for tests/audit_public_corpus/siglip_kernel/triton_sigmoid_bce.py: sigmoid_bce_forward(logits,
# row_offset, B, return_scalar_grads, temperature, bias_val, out) -> (loss, grad_dot_logits, grad_sum), float32
# [rows] each, and logits overwritten in place: with x = temperature * logits + bias_val in float32 and y[i, j] = 1
# where row_offset + i == j (the positive pair), loss[i] = sum_j (max(x, 0) - x * y + log(1 + exp(-|x|))) / B,
# grad = (sigmoid(x) - y) / B, grad_dot_logits[i] = sum_j grad * x, grad_sum[i] = sum_j grad, and logits <- (grad *
# temperature) in logits' dtype. Called as siglip-kernel's primary path (fused_siglip_loss backend "chunked_bf16",
# FusedChunkedSigLIP.forward) calls it on every chunk: logits = raw = img_chunk @ txt_features.T, [chunk, B] bf16,
# contiguous (L2-normalised features: values in [-1, 1]), row_offset = diag_offset + chunk_start (0 on one device),
# return_scalar_grads=True, temperature = log_temperature.exp() and bias_val = bias as 0-dim float32 device tensors
# (SigLIP's initialisation: log(10) and -10), out = the chunk's slices of three float32 [B] buffers. Here the second
# chunk of B = 512 in chunks of 256 (the package picks chunk = min(B, 4096) on SM90; rows * B stays below 2**31 by
# its 4 GB chunk budget). Stand-ins: the file's `from .gpu_config import get_gpu_arch` is resolved against a stand-in
# package siglip_kernel whose path is the corpus folder (its __package__ set in the file's frames), so it loads the
# corpus copy (siglip_kernel/gpu_config.py, unchanged); without a GPU, torch.cuda.get_device_capability answers
# (9, 0) (an H100) to that file's get_gpu_arch only (torch's raises without a CUDA driver). On a GPU nothing is
# changed.
import builtins
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "siglip_kernel"
_PKG = "siglip_kernel"
_FILE = "siglip_kernel/triton_sigmoid_bce.py"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real siglip_kernel, where installed, is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]

if not getattr(builtins, "_p2t_siglip_kernel", False):
    _PREV_IMPORT, _PREV_CAP = builtins.__import__, torch.cuda.get_device_capability

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILE):
            globals["__package__"] = _PKG  # the file's relative import resolves in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    def _capability(device=None):
        caller = sys._getframe(1).f_code.co_filename
        if not torch.cuda.is_available() and caller.endswith("siglip_kernel/gpu_config.py"):
            return (9, 0)
        return _PREV_CAP(device)

    builtins.__import__, torch.cuda.get_device_capability = _import, _capability
    builtins._p2t_siglip_kernel = True

ENTRY = "sigmoid_bce_forward"
AUDIT_SHAPE = (256, 512)  # chunk rows, global batch B
TOLERANCES = {"bfloat16": (1e-2, 1e-3)}  # float32 math; the gradient written back once in bf16


def make_inputs(case):
    rows, b = case.shape
    if not 0 < rows <= b:
        raise ValueError("a chunk holds 1 to B rows of the [B, B] logits")
    start = b - rows  # the last chunk: its diagonal sits at columns start .. b - 1
    img = torch.nn.functional.normalize(case.randn(rows, 64, dtype=torch.float32), dim=-1)
    txt = torch.nn.functional.normalize(case.randn(b, 64, dtype=torch.float32), dim=-1)
    txt[start:] = torch.nn.functional.normalize(img + 0.3 * txt[start:], dim=-1)  # positives correlate
    raw = (img @ txt.T).to(torch.bfloat16).contiguous()
    temp = torch.tensor(10.0, dtype=torch.float32, device=case.device)
    bias = torch.tensor(-10.0, dtype=torch.float32, device=case.device)
    bufs = [torch.empty(b, dtype=torch.float32, device=case.device) for _ in range(3)]
    out = tuple(buf[start:start + rows] for buf in bufs)
    return (raw.to(case.device), start, b, True, temp, bias, out)


def reference(logits, row_offset, B, return_scalar_grads=False, temperature=1.0, bias_val=0.0, out=None):
    if logits.shape[1] != B:
        raise ValueError("logits must be [rows, B]")
    t = torch.as_tensor(temperature, dtype=torch.float32).double().to(logits.device)
    bv = torch.as_tensor(bias_val, dtype=torch.float32).double().to(logits.device)
    x = logits.double() * t + bv
    rows = torch.arange(logits.shape[0], device=logits.device)[:, None] + row_offset
    y = (rows == torch.arange(B, device=logits.device)[None, :]).double()
    loss = (x.clamp_min(0) - x * y + torch.log1p(torch.exp(-x.abs()))).sum(1) / B
    grad = (torch.sigmoid(x) - y) / B
    gdot, gsum = (grad * x).sum(1), grad.sum(1)
    logits.copy_((grad * t).to(logits.dtype))
    res = (loss.float(), gdot.float(), gsum.float())
    if out is not None:
        for dst, src in zip(out, res):
            dst.copy_(src)
        res = tuple(out)
    return res if return_scalar_grads else res[0]
