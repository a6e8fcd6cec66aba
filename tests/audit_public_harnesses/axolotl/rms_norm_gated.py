# Audit harness for tests/audit_public_corpus/axolotl/rms_norm_gated.py: rms_norm_gated_forward(X, G, W, eps, offset)
# -> (Y, X2d, G2d, RSTD, BLOCK_SIZE, num_warps) with Y = (W + offset) * X / rms(X) * silu(G) on [..., H].
# The file imports liger_kernel (calculate_settings, ensure_contiguous, torch_to_triton_dtype, compare_version,
# is_npu_available) and axolotl.kernels.op_registry.register_kernel_op, neither installed here: stand-ins (liger's
# definitions; the registry's own fallback, which calls the function unregistered).
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

ENTRY = "rms_norm_gated_forward"
AUDIT_SHAPE = (2, 5, 200)
# Its one caller, FusedRMSNormGatedFunction.forward, is @ensure_contiguous (read in the file).
SKIP_PROBES = {"layout": "the only caller, FusedRMSNormGatedFunction.forward, is @ensure_contiguous"}


def make_inputs(case):
    b, t, h = case.shape
    return (case.randn(b, t, h), case.randn(b, t, h), case.randn(h), 1e-6, 0.0)


def reference(X, G, W, eps, offset):
    dim = X.shape[-1]
    x, g = X.reshape(-1, dim).float(), G.reshape(-1, dim).float()
    rstd = torch.rsqrt(x.pow(2).mean(-1) + eps)
    y = (W.float() + offset) * x * rstd[:, None] * torch.nn.functional.silu(g)
    block, warps = calculate_settings(dim)
    return y.view(X.shape), x, g, rstd, block, warps
