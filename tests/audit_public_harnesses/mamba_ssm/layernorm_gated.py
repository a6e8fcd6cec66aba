# Audit harness for tests/audit_public_corpus/mamba_ssm/layernorm_gated.py: rmsnorm_fn(x, weight, bias, z=None,
# eps=1e-6, group_size=None, norm_before_gate=True) -> RMSNorm of x [..., N] over groups of group_size (default N),
# times weight (+ bias), gated by silu(z) after the norm (norm_before_gate) or before it. The file imports einops
# (its torch reference only), not installed here: a stand-in; and torch.cuda.device, whose guard
# fails on CPU tensors (x.device.index is None), is a no-op when there is no GPU.
import sys
import types

import torch
import torch.nn.functional as F


def _einops_unavailable(*a, **k):
    raise NotImplementedError("einops stand-in: rmsnorm_fn does not call it")


_einops = types.ModuleType("einops")
_einops.rearrange = _einops.repeat = _einops_unavailable
sys.modules.setdefault("einops", _einops)


class _NoDeviceGuard:  # the entries' `with torch.cuda.device(x.device.index)`: index None on CPU, a TypeError there
    def __init__(self, device):
        self.device = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if not torch.cuda.is_available():  # CPU interpreter only; on a GPU the real guard runs
    torch.cuda.device = _NoDeviceGuard

ENTRY = "rmsnorm_fn"
AUDIT_SHAPE = (2, 5, 96)


def make_inputs(case):
    b, t, n = case.shape
    return (case.randn(b, t, n), case.randn(n), case.randn(n), case.randn(b, t, n), 1e-6, None, True)


def reference(x, weight, bias, z=None, eps=1e-6, group_size=None, norm_before_gate=True):
    n = x.shape[-1]
    gs = group_size or n
    xf = x.float()
    if z is not None and not norm_before_gate:
        xf = xf * F.silu(z.float())
    xg = xf.reshape(*x.shape[:-1], n // gs, gs)
    out = (xg * torch.rsqrt(xg.pow(2).mean(-1, keepdim=True) + eps)).reshape(x.shape) * weight.float()
    if bias is not None:
        out = out + bias.float()
    if z is not None and norm_before_gate:
        out = out * F.silu(z.float())
    return out.to(x.dtype)
