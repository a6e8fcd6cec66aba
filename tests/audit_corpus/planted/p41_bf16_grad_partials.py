"""Norm backward that adds each program's dW/db partials into the weight-dtype buffer with atomics: bf16 sums."""

import torch
import triton
import triton.language as tl


@triton.jit
def norm_bwd_dw_kernel(dy_ptr, xhat_ptr, dw_ptr, db_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                       dtype: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    cmask = cols < n_cols
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(pid * ROWS, tl.minimum(pid * ROWS + ROWS, n_rows)):
        dy = tl.load(dy_ptr + r * n_cols + cols, mask=cmask, other=0.0).to(tl.float32)
        xh = tl.load(xhat_ptr + r * n_cols + cols, mask=cmask, other=0.0).to(tl.float32)
        dw += dy * xh
        db += dy
    tl.atomic_add(dw_ptr + cols, dw.to(dtype), mask=cmask)  # planted: atomic_order, low_precision_partials
    tl.atomic_add(db_ptr + cols, db.to(tl.bfloat16), mask=cmask)  # planted: atomic_order, low_precision_partials


def norm_bwd_dw(dy: torch.Tensor, xhat: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dy, xhat = dy.contiguous(), xhat.contiguous()
    n_rows, n_cols = dy.shape
    dw = torch.zeros_like(w)
    db = torch.zeros_like(w)
    out_dtype = tl.float32 if w.dtype == torch.float32 else tl.bfloat16
    norm_bwd_dw_kernel[(triton.cdiv(n_rows, 64),)](dy, xhat, dw, db, n_rows, n_cols, ROWS=64,
                                                   BLOCK=triton.next_power_of_2(n_cols), dtype=out_dtype)
    return dw, db
