"""An absmax with other=0 padding (0 is the identity of a max of |x|), a causal select with -1e6 (structure, not
padding), and a triangular select in a loop: none of them puts padding into a reduction."""

import torch
import triton
import triton.language as tl


@triton.jit
def absmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.max(tl.abs(x), axis=0))


@triton.jit
def causal_scores_kernel(s_ptr, p_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    s = tl.load(s_ptr + row * n + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
    s = s + tl.where(cols <= row, 0.0, -1.0e6)
    m = tl.max(s, axis=0)
    e = tl.exp(s - m)
    tl.store(p_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


@triton.jit
def lower_tri_rowsum_kernel(a_ptr, out_ptr, BT: tl.constexpr):
    o_i = tl.arange(0, BT)
    acc = tl.zeros((BT,), dtype=tl.float32)
    for i in range(0, BT):
        a = tl.load(a_ptr + i * BT + o_i).to(tl.float32)
        a = tl.where(o_i < i, a, 0.0)
        acc += tl.where(o_i == i, tl.sum(a, axis=0), 0.0)
    tl.store(out_ptr + o_i, acc)


def absmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    absmax_kernel[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out


def causal_scores(s: torch.Tensor) -> torch.Tensor:
    s = s.contiguous()
    p = torch.empty_like(s)
    causal_scores_kernel[(s.shape[0],)](s, p, s.shape[1], BLOCK=triton.next_power_of_2(s.shape[1]))
    return p


def lower_tri_rowsum(a: torch.Tensor) -> torch.Tensor:
    a = a.contiguous()
    assert a.shape == (64, 64)
    out = torch.empty(64, device=a.device, dtype=torch.float32)
    lower_tri_rowsum_kernel[(1,)](a, out, BT=64)
    return out
