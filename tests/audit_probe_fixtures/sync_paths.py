# label: good
# Two host syncs: one in a one-time self-check behind a module-level cache (never on the example's path after the
# first call, and here never at all: the gate is off on this machine), one on every call (.item() of a device total).
import torch
import triton
import triton.language as tl

_CHECKED: dict[str, bool] = {}


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * s, mask=offs < n)


def _self_check(device: str) -> bool:
    x = torch.ones(4, device=device)
    return bool((x * 2).sum().item() == 8)


def fast_path_available(device: str) -> bool:
    ok = _CHECKED.get(device)
    if ok is None:
        ok = _self_check(device)
        _CHECKED[device] = ok
    return ok


def normalize(x: torch.Tensor) -> torch.Tensor:
    if x.is_cuda and x.dtype == torch.float64 and fast_path_available(str(x.device)):
        return x
    x = x.contiguous()
    total = float(x.abs().sum().item())
    y = torch.empty_like(x)
    if x.numel():
        scale_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), 1.0 / max(total, 1e-12), BLOCK=128)
    return y
