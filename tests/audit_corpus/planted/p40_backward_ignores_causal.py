"""An autograd Function whose forward honours `causal` and whose backward always computes the causal gradient."""

import torch
import triton
import triton.language as tl


@triton.jit
def scores_fwd_kernel(s_ptr, p_ptr, n, CAUSAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    valid = cols < n
    if CAUSAL:
        valid = valid & (cols <= row)
    s = tl.load(s_ptr + row * n + cols, mask=valid, other=-float("inf")).to(tl.float32)
    e = tl.exp(s - tl.max(s, axis=0))
    tl.store(p_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


@triton.jit
def scores_bwd_kernel(p_ptr, dp_ptr, ds_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    valid = (cols < n) & (cols <= row)  # always causal
    p = tl.load(p_ptr + row * n + cols, mask=valid, other=0.0).to(tl.float32)
    dp = tl.load(dp_ptr + row * n + cols, mask=valid, other=0.0).to(tl.float32)
    ds = p * (dp - tl.sum(p * dp, axis=0))
    tl.store(ds_ptr + row * n + cols, ds, mask=cols < n)


class CausalSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s: torch.Tensor, causal: bool) -> torch.Tensor:
        s = s.contiguous()
        n = s.shape[-1]
        p = torch.empty_like(s)
        scores_fwd_kernel[(s.shape[0],)](s, p, n, CAUSAL=causal, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, dp: torch.Tensor):
        (p,) = ctx.saved_tensors
        dp = dp.contiguous()
        n = p.shape[-1]
        ds = torch.empty_like(p)
        scores_bwd_kernel[(p.shape[0],)](p, dp, ds, n, BLOCK=triton.next_power_of_2(n))  # planted: backward_ignores_flag
        return ds, None
