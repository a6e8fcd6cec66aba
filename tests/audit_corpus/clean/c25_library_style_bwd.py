"""Library-style code the audit used to misread (issue 17): a norm backward whose padded lanes are multiplied by
a zero-padded operand, a 1-D weight with an unused row stride, exp of log-probabilities, a wrapper that asserts
the block divides the size, a contiguity decorator, and a hidden-size constexpr."""

import functools

import torch
import triton
import triton.language as tl


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*[a.contiguous() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
    return wrapper


@triton.jit
def norm_bwd_kernel(dx_ptr, dy_ptr, x_ptr, w_ptr, w_row_stride, mean_ptr, rstd_ptr, n_cols,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32) + 1.0  # gemma-style offset
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    x_hat = (x - mean) * rstd  # padded lanes: -mean * rstd
    wdy = w * dy  # padded lanes: 0, because dy was loaded with other=0
    c1 = tl.sum(x_hat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    tl.store(dx_ptr + row * n_cols + cols, (wdy - (x_hat * c1 + c2)) * rstd, mask=mask)


@triton.jit
def kl_rows_kernel(logp_ptr, logq_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        logp = tl.load(logp_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        logq = tl.load(logq_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += tl.sum(tl.exp(logp) * (logp - logq), axis=0)  # logp <= 0: exp cannot overflow
    tl.store(out_ptr + row, acc)


@triton.jit
def scale_kernel(x_ptr, out_ptr, scale, hidden: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * scale)  # exact: the wrapper asserts n % BLOCK == 0


class NormBackward(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, dy, x, w, mean, rstd):
        n_rows, n_cols = x.shape
        dx = torch.empty_like(x)
        norm_bwd_kernel[(n_rows,)](dx, dy, x, w, w.stride(0), mean, rstd, n_cols,
                                   BLOCK=triton.next_power_of_2(n_cols))
        return dx


def kl_rows(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    logp, logq = logp.contiguous(), logq.contiguous()
    n_rows, n_cols = logp.shape
    out = torch.empty(n_rows, device=logp.device, dtype=torch.float32)
    kl_rows_kernel[(n_rows,)](logp, logq, out, n_cols, BLOCK=1024)
    return out


def scale(x: torch.Tensor, s: float) -> torch.Tensor:
    x = x.contiguous()
    n = x.numel()
    assert n % 4096 == 0, "size must be a multiple of 4096"
    out = torch.empty_like(x)
    scale_kernel[(n // 1024,)](x, out, s, hidden=x.shape[-1], BLOCK=1024)
    return out
