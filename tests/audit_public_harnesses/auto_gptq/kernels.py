# Audit harness for tests/audit_public_corpus/auto_gptq/kernels.py: quant_matmul_248(input, qweight, scales, qzeros,
# g_idx, bits, maxq) -> out [M, N] = input [M, K] @ W, W[k, n] = (q[k, n] - (z[g_idx[k], n] + 1)) * scales[g_idx[k], n]:
# GPTQ's packed weight (qweight [K * bits / 32, N] int32, 32 / bits rows of q per word), zeros stored minus one (the
# GPTQ v1 format, qzeros [G, N * bits / 32] int32) and fp16 scales [G, N]; fp32 accumulation, out in input's dtype.
# Called as auto-gptq's qlinear_triton.QuantLinear.forward calls it on inference (QuantLinearInferenceOnlyFunction.apply
# -> quant_matmul_248): input = x.reshape(-1, infeatures) (the hidden states, contiguous, fp16), the layer's buffers as
# QuantLinear.pack leaves them (contiguous), g_idx = [i // group_size] (int32, desc_act False), bits 4, maxq 15.
# Qwen2-0.5B-Instruct-GPTQ-Int4's q_proj (infeatures = outfeatures = 896, group 128: G 7); 6 tokens. QuantLinear
# asserts infeatures % 32 == 0 and outfeatures % 32 == 0, nothing more.
# Stand-ins: the file's `from . import custom_autotune` is resolved against a stand-in package
# auto_gptq.nn_modules.triton_utils whose path is the corpus folder (its __package__ is set in the file's frames), so
# it loads the corpus copy (auto_gptq/custom_autotune.py, unchanged); without a GPU, triton.testing.do_bench answers
# the same untimed result to that file's _bench (so the first pruned config wins, as the audit's interpreter does for
# @triton.autotune; do_bench needs a GPU driver) and is left as is for every other caller. `with torch.cuda.device(input.device)` is a no-op for a CPU tensor in the file's own frames (torch's raises
# for a CPU device). On a GPU nothing else is changed.
import builtins
import contextlib
import sys
import types
from pathlib import Path

import torch
import triton
import triton.testing

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "auto_gptq"
_PKG = "auto_gptq.nn_modules.triton_utils"
_FILE = "auto_gptq/kernels.py"
for _name in ("auto_gptq", "auto_gptq.nn_modules", _PKG):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules[_PKG].__path__ = [str(_DIR)]

if not getattr(builtins, "_p2t_auto_gptq", False):
    _PREV_IMPORT, _PREV_DEVICE = builtins.__import__, torch.cuda.device

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILE):
            globals["__package__"] = _PKG  # the file's relative imports resolve in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    def _device(device):
        if sys._getframe(1).f_code.co_filename.endswith(_FILE) and torch.device(device).type != "cuda":
            return contextlib.nullcontext()
        return _PREV_DEVICE(device)

    builtins.__import__, torch.cuda.device = _import, _device
    builtins._p2t_auto_gptq = True
    if not torch.cuda.is_available():
        _PREV_BENCH = triton.testing.do_bench

        def _untimed(fn, *args, **kwargs):  # custom_autotune's _bench: every config ties, the first pruned one wins
            if sys._getframe(1).f_code.co_filename.endswith("auto_gptq/custom_autotune.py"):
                return (0.0, 0.0, 0.0)
            return _PREV_BENCH(fn, *args, **kwargs)

        triton.testing.do_bench = _untimed

ENTRY = "quant_matmul_248"
AUDIT_SHAPE = (6, 896, 896)  # tokens M, infeatures K, outfeatures N
GROUP = 128
BITS = 4


def _pack_rows(q):  # [K, N] 4-bit values -> [K / 8, N] int32, row k in bits 4 * (k % 8) (QuantLinear.pack)
    k, n = q.shape
    q = q.to(torch.int64).reshape(k // 8, 8, n)
    word = sum(q[:, j] << (BITS * j) for j in range(8))
    return (word - ((word >> 31) << 32)).to(torch.int32)  # two's complement into int32


def make_inputs(case):
    m, k, n = case.shape
    if k % 32 or n % 32 or min(m, k, n) < 1:
        raise ValueError("QuantLinear asserts infeatures % 32 == 0 and outfeatures % 32 == 0")
    g = -(-k // GROUP)
    q = case.randint(0, 16, (k, n))
    zeros = case.randint(6, 10, (g, n))  # asymmetric GPTQ zeros, stored minus one
    qzeros = _pack_rows((zeros - 1).T.contiguous()).T.contiguous()  # [G, N / 8]
    scales = (case.rand(g, n, low=0.5, high=1.5) * 0.01).to(torch.float16)
    g_idx = (torch.arange(k) // GROUP).to(torch.int32)
    x = case.randn(m, k, dtype=torch.float16)
    return (x, _pack_rows(q), scales, qzeros, g_idx.to(x.device), BITS, 2**BITS - 1)


def _unpack_rows(w, bits, rows):
    shifts = torch.arange(0, 32, bits, device=w.device)
    return ((w.to(torch.int64).unsqueeze(1) >> shifts[None, :, None]) & (2**bits - 1)).reshape(-1, w.shape[-1])[:rows]


def reference(input, qweight, scales, qzeros, g_idx, bits, maxq):
    k = input.shape[1]
    q = _unpack_rows(qweight, bits, k)  # [K, N]
    z = _unpack_rows(qzeros.T.contiguous(), bits, scales.shape[1]).T + 1  # [G, N]
    gi = g_idx.long()
    w = (q - z[gi]).double() * scales.double()[gi]
    return (input.double() @ w).to(input.dtype)
