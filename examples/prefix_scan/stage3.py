"""Stage 3: chunked scan with a running carry, and reduce-then-scan across programs for a few long rows.

- Carry: a row is scanned BLOCK_N elements at a time: y = cumsum(chunk) + carry, then carry = y[:, -1].
  The register footprint is one chunk whatever N is (stage 2 holds the whole row and stops at 16384), and
  each element is read and written once. Short rows go ROWS at a time in a [ROWS, BLOCK_N] tile.
- Reduce-then-scan: with fewer row tiles than 4 programs per SM (16 rows of 1M elements would use 16 of 132
  SMs), each row is cut into SPLIT segments. Kernel 1 writes each segment's total; kernel 2 starts each
  segment's carry at the sum of the totals before it and scans it. x is read twice, but by SPLIT times as
  many programs.
- Segment boundaries are multiples of the largest BLOCK_N any config uses, so the two kernels, autotuned
  independently, agree on them. fp32 accumulation for floats, int32 (wrapping) for int32.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
MAX_SPLIT = 64
_CONFIGS = [triton.Config({"BLOCK_N": b}, num_warps=w) for b, w in ((512, 4), (1024, 4), (1024, 8), (2048, 8),
                                                                    (2048, 16), (4096, 16))]
# The interpreter gets one small chunk: rows of ~1000 then take several steps, so the carry is exercised.
CONFIGS = [triton.Config({"BLOCK_N": 256}, num_warps=4)] if INTERPRET else _CONFIGS
SEG_ALIGN = max(c.kwargs["BLOCK_N"] for c in CONFIGS)
_SM_COUNT: dict[int, int] = {}
_BEST: dict[tuple, dict] = {}  # autotune key -> the chosen config's launch kwargs


def _prune(configs, named_args, **kwargs):
    # No chunk wider than the (padded) tile the rows need.
    width = kwargs["ROW_WIDTH"]
    return [c for c in configs if c.kwargs["BLOCK_N"] * kwargs["ROWS"] <= max(width, 512)] or configs[:1]


@triton.autotune(configs=CONFIGS, key=["N", "ROWS", "SPLIT", "ROW_WIDTH"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def segment_sums_kernel(x_ptr, part_ptr, M, N, seg_len, stride_xr, stride_xc, ACC: tl.constexpr,
                        ROWS: tl.constexpr, SPLIT: tl.constexpr, ROW_WIDTH: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    seg = tl.program_id(1)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    c_begin = seg.to(tl.int64) * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    acc = tl.zeros((ROWS, BLOCK_N), dtype=ACC)
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        mask = row_ok[:, None] & (c[None, :] < c_end)
        acc += tl.load(x_ptr + rows[:, None] * stride_xr + c[None, :] * stride_xc, mask=mask, other=0).to(ACC)
    tl.store(part_ptr + rows * SPLIT + seg, tl.sum(acc, axis=1), mask=row_ok)


@triton.autotune(configs=CONFIGS, key=["N", "ROWS", "SPLIT", "ROW_WIDTH"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def scan_with_carry_kernel(x_ptr, out_ptr, part_ptr, M, N, seg_len, stride_xr, stride_xc, stride_or,
                           ACC: tl.constexpr, ROWS: tl.constexpr, SPLIT: tl.constexpr, ROW_WIDTH: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    seg = tl.program_id(1)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    c_begin = seg.to(tl.int64) * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    carry = tl.zeros((ROWS,), dtype=ACC)
    if SPLIT > 1:
        # Exclusive prefix of the segment totals: the sum of everything left of this segment.
        parts = tl.arange(0, SPLIT)
        pmask = row_ok[:, None] & (parts[None, :] < seg)
        carry = tl.sum(tl.load(part_ptr + rows[:, None] * SPLIT + parts[None, :], mask=pmask, other=0), axis=1)
    x_rows = x_ptr + rows[:, None] * stride_xr
    o_rows = out_ptr + rows[:, None] * stride_or
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        mask = row_ok[:, None] & (c[None, :] < c_end)
        x = tl.load(x_rows + c[None, :] * stride_xc, mask=mask, other=0).to(ACC)
        y = tl.cumsum(x, axis=1) + carry[:, None]
        tl.store(o_rows + c[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)
        # The carry into the next chunk is the chunk's last column of y (masked lanes add 0). Picked out with a
        # masked sum rather than `carry += tl.sum(x)`: Triton 3.6's OptimizeThreadLocality pass asserts on a float
        # reduction accumulated across a loop that also holds a scan (measured on the H200, 2026-12-03).
        carry = tl.sum(tl.where(cols[None, :] == BLOCK_N - 1, y, 0), axis=1)


def _sm_count(device: torch.device) -> int:
    """SM count on a GPU; 1 under the interpreter (two long rows then get split, so kernel 1 runs)."""
    if device.type != "cuda":
        return 1
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def _tuned_launch(kernel, key: tuple, grid_of, *args, **kwargs) -> None:
    """Launch an autotuned kernel. Once it has picked a config for `key`, later calls launch that config directly:
    the autotuner's per-call dispatch (argument dicts, key, cache lookup) is host time on every call."""
    cfg = _BEST.get(key)
    if cfg is None:
        kernel[grid_of](*args, **kwargs)
        best = getattr(kernel, "best_config", None)  # set by Triton's Autotuner.run (2.1 and later)
        if best is not None:
            _BEST[key] = best.all_kwargs() if hasattr(best, "all_kwargs") else \
                {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}
        return
    kernel.fn[grid_of(cfg)](*args, **kwargs, **cfg)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive cumsum over the last dim of a 2-D tensor of any strides and length."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return out
    acc = tl.float32 if x.is_floating_point() else tl.int32
    width = triton.next_power_of_2(N)
    rows = max(1, min(16, 2048 // width))  # short rows: several per tile
    n_tiles = triton.cdiv(M, rows)
    n_align = triton.cdiv(N, SEG_ALIGN)  # aligned pieces a segment is made of
    want = 4 * _sm_count(x.device)
    split = 1
    if n_tiles < want and n_align >= 2:
        split = min(MAX_SPLIT, triton.next_power_of_2(triton.cdiv(want, n_tiles)), 1 << (n_align.bit_length() - 1))
    seg_len = triton.cdiv(n_align, split) * SEG_ALIGN
    grid = (n_tiles, split)
    meta = dict(ACC=acc, ROWS=rows, SPLIT=split, ROW_WIDTH=width)
    key = (N, rows, split, width, x.dtype, x.device.index)
    if split > 1:
        part = torch.empty((M, split), dtype=torch.float32 if x.is_floating_point() else torch.int32,
                           device=x.device)
        _tuned_launch(segment_sums_kernel, ("sums", *key), lambda m: grid, x, part, M, N, seg_len, x.stride(0),
                      x.stride(1), **meta)
    else:
        part = out  # never read: SPLIT == 1 starts every row at carry 0
    _tuned_launch(scan_with_carry_kernel, ("scan", *key), lambda m: grid, x, out, part, M, N, seg_len, x.stride(0),
                  x.stride(1), out.stride(0), **meta)
    return out
