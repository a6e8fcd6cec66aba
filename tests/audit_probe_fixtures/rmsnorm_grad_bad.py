# label: bad grad
# The same RMSNorm with a backward that averages over the padded block (BLOCK) instead of n: right forward, wrong
# gradients whenever n is not a power of 2.
import torch
import triton
import triton.language as tl


@triton.jit
def rms_fwd(x_ptr, w_ptr, y_ptr, r_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(r_ptr + row, rstd)
    tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask)


@triton.jit
def rms_bwd(x_ptr, w_ptr, dy_ptr, r_ptr, dx_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(r_ptr + row)
    g = dy * w
    dx = rstd * g - rstd * rstd * rstd * x * (tl.sum(g * x, axis=0) / BLOCK)
    tl.store(dx_ptr + row * stride + cols, dx, mask=mask)


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        m, n = x2.shape
        y = torch.empty_like(x2)
        r = torch.empty(m, device=x.device, dtype=torch.float32)
        if x2.numel():
            rms_fwd[(m,)](x2, w, y, r, x2.stride(0), n, eps, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, w, r)
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        x2, w, r = ctx.saved_tensors
        m, n = x2.shape
        dy2 = dy.reshape(-1, n).contiguous()
        dx = torch.empty_like(x2)
        if x2.numel():
            rms_bwd[(m,)](x2, w, dy2, r, dx, x2.stride(0), n, BLOCK=triton.next_power_of_2(n))
        dw = (dy2.float() * x2.float() * r[:, None]).sum(0).to(w.dtype)
        return dx.view(dy.shape), dw, None


def rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _RMSNorm.apply(x, w.contiguous(), eps)
