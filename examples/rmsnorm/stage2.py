"""Stage 2: forward only, [ROWS, BLOCK_N] tiles with autotuned rows-per-program and num_warps, strided rows.

A 128-wide row is 256 bytes in bf16: one program per row (stage 1) spends its time being scheduled. Here ROWS
rows share a program (about 4-16 K elements per tile), the weight is loaded once per tile, and the autotuner
picks ROWS and num_warps per row width. Row and column strides are passed, so no input is copied.
"""

import os

import torch
import triton
import triton.language as tl

SUPPORTS_BACKWARD = False  # forward only: stage 3 implements backward
EPS = 1e-6
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
CONFIGS = [triton.Config({"ROWS": r}, num_warps=w) for r in (1, 2, 4, 8, 16) for w in (2, 4, 8, 16)]


def _prune(configs, named_args, **kwargs):
    """Tiles of at most 16 K elements, 16-64 per thread; one config under the interpreter."""
    block_n = kwargs["BLOCK_N"]
    ok = [c for c in configs if c.kwargs["ROWS"] * block_n <= 16384 and
          16 <= c.kwargs["ROWS"] * block_n // (32 * c.num_warps) <= 64]
    if not ok:  # very short rows: the most rows, fewest warps; very long rows: one row, most warps
        rows, warps = (16, 2) if block_n <= 16384 else (1, 16)
        ok = [c for c in configs if c.kwargs["ROWS"] == rows and c.num_warps == warps]
    if INTERPRET:  # no timing on the CPU: the tile with the most rows, so the multi-row code runs
        return [max(ok, key=lambda c: (c.kwargs["ROWS"], -c.num_warps))]
    return ok


@triton.autotune(configs=CONFIGS, key=["N", "BLOCK_N"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def rms_norm_rows_kernel(x_ptr, w_ptr, y_ptr, M, N, stride_xr, stride_xc, stride_w, stride_y, eps,
                         BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)  # int64 row offsets
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    mask = (rows[:, None] < M) & col_ok[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_xr + cols[None, :] * stride_xc, mask=mask, other=0.0)
    x = x.to(tl.float32)
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """RMSNorm over the last dim (eps = 1e-6) of a 2-D tensor of any strides."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if x.numel():
        grid = lambda meta: (triton.cdiv(M, meta["ROWS"]),)
        rms_norm_rows_kernel[grid](x, weight, y, M, N, x.stride(0), x.stride(1), weight.stride(0), y.stride(0), EPS,
                                   BLOCK_N=triton.next_power_of_2(N))
    return y
