# Audit harness for tests/audit_public_corpus/amd_quark/float8_e5m3_triton.py: fp8_e5m3_qdq(inputs_f32) -> float32:
# each value clamped to [0, 114688] and rounded to the nearest unsigned FP8 E5M3 value (5 exponent bits, bias 15,
# 3 mantissa bits, subnormals down to 2**-17, ties to even; the pattern 0xFF is NaN), then read back: quark's fused
# fake quantize-dequantize for E5M3. Called as quark's hw_emulation calls it for CUDA tensors
# (fake_quantize_float8_e5m3 and fake_quantize_fp8_e5m3_per_tensor_with_scale ->
# torch.ops.torch_guard._float32_qdq_to_float8_e5m3_func -> float32_qdq_to_float8_e5m3_func -> this entry on any
# non-CPU device; CPU tensors take reference.py): the tensor being fake-quantized cast to float32 (and divided by its
# per-tensor scale), contiguous [rows, cols] here: a weight's positive magnitudes over E5M3's whole range (the format is
# unsigned: negative values clamp to 0). The file imports quark.common.data_type (BaseFP8_E5M3, its range) and
# quark.torch.kernel.float8_e5m3.lookup (E5M3_LOOKUP_TABLE, a dict device -> the 256 decoded values): stand-ins with the
# package's values (amd-quark 0.13, MIT), the table built by lookup.py's rule and keyed by the tensor's device.
import math
import sys
import types

import torch

for _n in ("quark", "quark.common", "quark.common.data_type", "quark.torch", "quark.torch.kernel",
           "quark.torch.kernel.float8_e5m3", "quark.torch.kernel.float8_e5m3.lookup"):
    sys.modules.setdefault(_n, types.ModuleType(_n))


def _decode(bits):  # lookup.py's _generate_e5m3_lookup_table rule
    e, m = (bits >> 3) & 0x1F, bits & 0x7
    if e == 31 and m == 7:
        return float("nan")
    return 2.0 ** -14 * (m / 8) if e == 0 else 2.0 ** (e - 15) * (1 + m / 8)


_TABLE = torch.tensor([_decode(b) for b in range(256)], dtype=torch.float32)


class _PerDevice(dict):
    def __missing__(self, device):
        self[device] = _TABLE.to(device)
        return self[device]


_dt = sys.modules["quark.common.data_type"]
if not hasattr(_dt, "BaseFP8_E5M3"):
    _dt.BaseFP8_E5M3 = type("BaseFP8_E5M3", (), {"bitwidth": 8, "min_value": 0.0, "max_value": 114688.0})
_lk = sys.modules["quark.torch.kernel.float8_e5m3.lookup"]
if not hasattr(_lk, "E5M3_LOOKUP_TABLE"):
    _lk.E5M3_LOOKUP_TABLE = _PerDevice()

ENTRY = "fp8_e5m3_qdq"
AUDIT_SHAPE = (48, 640)  # rows, cols


def make_inputs(case):
    r, c = case.shape
    exps = case.rand(r, c, low=-19.0, high=17.0, dtype=torch.float32)  # magnitudes across the range
    return (torch.exp2(exps) * case.rand(r, c, low=1.0, high=2.0, dtype=torch.float32),)


_GRID = torch.tensor(sorted(v for v in (_decode(b) for b in range(256)) if not math.isnan(v)), dtype=torch.float64)


def reference(inputs_f32):
    if inputs_f32.dtype != torch.float32:
        raise ValueError("fp8_e5m3_qdq takes float32")
    x = inputs_f32.double().clamp(0.0, 114688.0).cpu()
    grid = _GRID
    i = torch.searchsorted(grid, x.reshape(-1)).clamp(1, len(grid) - 1)
    lo, hi = grid[i - 1], grid[i]
    xf = x.reshape(-1)
    d_lo, d_hi = xf - lo, hi - xf
    # ties to even: the even pattern is the one with an even mantissa (the grid index parity follows it)
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (i % 2 == 0))
    out = torch.where(xf >= hi, hi, torch.where(pick_hi, hi, lo))
    return out.reshape(x.shape).float().to(inputs_f32.device)
