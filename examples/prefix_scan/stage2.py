"""Stage 2: the whole row in one block, scanned with tl.cumsum (a parallel associative scan in registers).

Each program loads a [ROWS, BLOCK_N] tile (BLOCK_N = next power of 2 of N, coalesced along the row) and
tl.cumsum runs a log-depth scan across the lanes and warps: about log2(N) steps instead of N dependent ones.
ROWS and num_warps are autotuned per row width. Limit: the row must fit in registers (N <= 16384).
"""

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
MAX_N = 16384
CONFIGS = [triton.Config({"ROWS": r}, num_warps=w) for r in (1, 2, 4, 8, 16) for w in (2, 4, 8, 16)]


def _prune(configs, named_args, **kwargs):
    """Tiles of at most 16 K elements, 8-32 per thread; one config under the interpreter."""
    block_n = kwargs["BLOCK_N"]
    ok = [c for c in configs if c.kwargs["ROWS"] * block_n <= 16384 and
          8 <= c.kwargs["ROWS"] * block_n // (32 * c.num_warps) <= 32]
    if not ok:
        rows, warps = (16, 2) if block_n <= 256 else (1, 16)
        ok = [c for c in configs if c.kwargs["ROWS"] == rows and c.num_warps == warps]
    if INTERPRET:  # no timing on the CPU: the tile with the most rows, so the multi-row code runs
        return [max(ok, key=lambda c: (c.kwargs["ROWS"], -c.num_warps))]
    return ok


@triton.autotune(configs=CONFIGS, key=["N", "BLOCK_N"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def cumsum_block_kernel(x_ptr, out_ptr, M, N, stride_xr, stride_xc, stride_or, BLOCK_N: tl.constexpr,
                        ACC: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xr + cols[None, :] * stride_xc, mask=mask, other=0).to(ACC)
    y = tl.cumsum(x, axis=1)  # padded lanes hold 0 and sit after the real ones: they change nothing
    tl.store(out_ptr + rows[:, None] * stride_or + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive cumsum over the last dim of a 2-D tensor (fp32 accumulation for floats, int32 for int32)."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    if N > MAX_N:
        raise ValueError(f"stage 2 scans a whole row in registers; N = {N} is over {MAX_N} (stage 3 chunks rows)")
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if x.numel():
        acc = tl.float32 if x.is_floating_point() else tl.int32
        grid = lambda meta: (triton.cdiv(M, meta["ROWS"]),)
        cumsum_block_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), out.stride(0),
                                  BLOCK_N=triton.next_power_of_2(N), ACC=acc)
    return out
