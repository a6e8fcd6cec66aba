# Audit harness for tests/audit_public_corpus/axolotl/gemma4_fused_rope.py: fused_rms_norm_rope(x, weight, cos, sin,
# eps) -> RMSNorm(x) * weight, then rotate-half RoPE on the first n_rot dims of x (B, S, H, D) with cos/sin
# (B, S, n_rot), n_rot even and <= D (the rest pass through: partial rotary).
# The file imports liger_kernel (calculate_settings, ensure_contiguous, torch_to_triton_dtype, compare_version,
# is_npu_available), not installed here: stand-ins with liger's definitions (the axolotl registry stand-in below is
# shared with the rms_norm_gated harness and unused by this file). Its ops are torch.library.triton_op, as shipped.
import functools
import operator
import sys
import types

import torch
import triton
import triton.language as tl

_names = ("liger_kernel", "liger_kernel.ops", "liger_kernel.ops.utils", "liger_kernel.utils", "axolotl",
          "axolotl.kernels", "axolotl.kernels.op_registry")
_mods = dict(zip(_names, (types.ModuleType(n) for n in _names), strict=True))


def calculate_settings(n):  # liger_kernel.ops.utils
    block = triton.next_power_of_2(n)
    if block > 65536:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize")
    return block, 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def ensure_contiguous(fn):  # liger_kernel.ops.utils
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        return fn(ctx, *(a.contiguous() if isinstance(a, torch.Tensor) else a for a in args),
                  **{k: v.contiguous() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})
    return wrapper


def compare_version(package, op, target):  # triton 3.x here
    return op(tuple(int(x) for x in triton.__version__.split(".")[:2]), tuple(int(x) for x in target.split(".")[:2]))


class _Op:  # op_registry._UnregisteredOp, the registry's fallback
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *a, **k):
        return self._fn(*a, **k)

    def register_fake(self, fn):
        return fn


_u = _mods["liger_kernel.ops.utils"]
_u.calculate_settings, _u.ensure_contiguous, _u.compare_version = calculate_settings, ensure_contiguous, compare_version
_u.torch_to_triton_dtype = {torch.float32: tl.float32, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}
_mods["liger_kernel.utils"].is_npu_available = lambda: False
_mods["axolotl.kernels.op_registry"].register_kernel_op = lambda name, mutates_args=(): _Op
for _name, _mod in _mods.items():
    sys.modules.setdefault(_name, _mod)
del operator

ENTRY = "fused_rms_norm_rope"
AUDIT_SHAPE = (2, 3, 4, 32)


def make_inputs(case):
    b, s, h, d = case.shape
    n_rot = 2 * (3 * d // 8)  # partial rotary, as the docstring allows (24 of 32)
    pos = torch.arange(b * s, dtype=torch.float32).view(b, s, 1)
    freq = 1.0 / (10000 ** (torch.arange(0, n_rot, 2, dtype=torch.float32) / max(n_rot, 1)))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    return (case.randn(b, s, h, d), case.randn(d), ang.cos().to(case.device, case.dtype),
            ang.sin().to(case.device, case.dtype), 1e-6)


def reference(x, weight, cos, sin, eps=1e-6, unit_offset=False):
    n_rot = cos.shape[-1]
    if n_rot % 2 or n_rot > x.shape[-1]:
        raise ValueError("rotary dim must be even and <= head_dim")
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (weight.float() + (1.0 if unit_offset else 0.0))
    r, rest = y[..., :n_rot], y[..., n_rot:]
    half = n_rot // 2
    rot = torch.cat([-r[..., half:], r[..., :half]], dim=-1)
    c, s = cos.float()[:, :, None, :], sin.float()[:, :, None, :]
    return torch.cat([r * c + rot * s, rest], dim=-1)
