# label: robust grad
# scale_grad_dense.py with a self-check that differentiates out.sum(): its callers hand the backward the expanded,
# stride-0 gradient it reads past, so the audit makes the probe's robustness "upstream" failure a contract P0.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def _launch(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    n = x.numel()
    if n:
        scale_kernel[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _launch(x.contiguous())

    @staticmethod
    def backward(ctx, dy):
        return _launch(dy)  # no .contiguous(): a stride-0 dy is read as dense


def scale(x: torch.Tensor) -> torch.Tensor:
    return _Scale.apply(x)


def _self_check() -> None:
    x = torch.randn(100, requires_grad=True)
    scale(x).sum().backward()
