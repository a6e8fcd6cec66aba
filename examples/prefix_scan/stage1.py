"""Stage 1: the naive scan, serial along each row: one lane per row keeps a running sum over the columns.

64 rows share a program, each thread walking its own row one element at a time: N dependent steps, and each
step's 64 loads are a row apart (no coalescing). Correct for any N, but latency bound.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_serial_kernel(x_ptr, out_ptr, M, N, stride_xr, stride_xc, stride_or, ROWS: tl.constexpr,
                         ACC: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    x_ptrs = x_ptr + rows * stride_xr  # column 0 of each row
    out_ptrs = out_ptr + rows * stride_or
    acc = tl.zeros((ROWS,), dtype=ACC)
    for _ in range(0, N):
        acc += tl.load(x_ptrs, mask=row_ok, other=0)  # promoted to ACC (fp32 for floats)
        tl.store(out_ptrs, acc, mask=row_ok)  # cast to the output dtype on the store
        x_ptrs += stride_xc
        out_ptrs += 1


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive cumsum over the last dim of a 2-D tensor (fp32 accumulation for floats, int32 for int32)."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if x.numel():
        ROWS = 64  # one row per thread of a 2-warp program
        acc = tl.float32 if x.is_floating_point() else tl.int32
        cumsum_serial_kernel[(triton.cdiv(M, ROWS),)](x, out, M, N, x.stride(0), x.stride(1), out.stride(0),
                                                      ROWS=ROWS, ACC=acc, num_warps=2)
    return out
