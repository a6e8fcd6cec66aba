# Audit harness for tests/audit_public_corpus/mamba_ssm/selective_state_update.py: selective_state_update(state, x,
# dt, A, B, C, D=None, z=None, dt_bias=None, dt_softplus=False) -> out: one decoding step of the selective scan.
# state [batch, nheads, dim, dstate] is updated in place (state = state * exp(A dt) + B dt x); out [batch, nheads,
# dim] = (state . C) + D x, gated by silu(z). B, C [batch, ngroups, dstate]; D, dt_bias [nheads, dim] (the docstring's
# shapes). The file imports einops (its torch reference only) and mamba_ssm.ops.triton.softplus, neither installed
# here: stand-ins (softplus: the file's own Triton 3 definition); and torch.cuda.device, whose guard fails on CPU
# tensors (x.device.index is None), is a no-op when there is no GPU.
import sys
import types

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def softplus(dt):  # mamba_ssm/ops/triton/softplus.py, TRITON3 branch
    return tl.math.log(tl.math.exp(dt) + 1)


def _einops_unavailable(*a, **k):
    raise NotImplementedError("einops stand-in: selective_state_update does not call it")


_names = ("mamba_ssm", "mamba_ssm.ops", "mamba_ssm.ops.triton", "mamba_ssm.ops.triton.softplus", "einops")
_mods = dict(zip(_names, (types.ModuleType(n) for n in _names), strict=True))
_mods["mamba_ssm.ops.triton.softplus"].softplus = softplus
_mods["einops"].rearrange = _mods["einops"].repeat = _einops_unavailable
for _name, _mod in _mods.items():
    sys.modules.setdefault(_name, _mod)


class _NoDeviceGuard:  # the entries' `with torch.cuda.device(x.device.index)`: index None on CPU, a TypeError there
    def __init__(self, device):
        self.device = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if not torch.cuda.is_available():  # CPU interpreter only; on a GPU the real guard runs
    torch.cuda.device = _NoDeviceGuard

ENTRY = "selective_state_update"
AUDIT_SHAPE = (3, 4, 12, 16)  # batch, nheads, dim, dstate (2 groups)


def make_inputs(case):
    b, h, d, n = case.shape
    g = 2 if h % 2 == 0 else 1
    return (case.randn(b, h, d, n), case.randn(b, h, d), case.randn(b, h, d) * 0.5,
            -torch.rand(h, d, n, device=case.device, dtype=case.dtype) - 0.5,
            case.randn(b, g, n), case.randn(b, g, n), case.randn(h, d), case.randn(b, h, d), case.randn(h, d) * 0.1,
            True)


def reference(state, x, dt, A, B, C, D=None, z=None, dt_bias=None, dt_softplus=False):
    nheads, ngroups = state.shape[1], B.shape[1]
    if dt_bias is not None:
        dt = dt + dt_bias
    dt = F.softplus(dt.float()) if dt_softplus else dt.float()
    dA = torch.exp(dt[..., None] * A.float())
    Bh = B.float().repeat_interleave(nheads // ngroups, dim=1)
    Ch = C.float().repeat_interleave(nheads // ngroups, dim=1)
    new = state.float() * dA + dt[..., None] * Bh[:, :, None, :] * x.float()[..., None]
    state.copy_(new)
    out = torch.einsum("bhdn,bhn->bhd", new, Ch)
    if D is not None:
        out = out + x.float() * D.float()
    if z is not None:
        out = out * F.silu(z.float())
    return out.to(x.dtype)
