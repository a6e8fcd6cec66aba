"""Kernel variants for the read-mostly gallery ops: logsumexp, prefix scan, cross-entropy (issue 20, items 1-3).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/explore_reductions.py [--budget-s 165]

For each op at its bench shapes (logsumexp 16384x4096 and 64x2**20 bf16; prefix scan 4096x16384 and 16x2**20 fp32;
cross-entropy 8192x128256 and 8192x32000 bf16), side by side: the gallery stage 3 wrapper, torch.compile, Liger
(cross-entropy), kernel variants written so that the winner pastes back into stage3.py (block sizes, warps, rows
per program, persistent grid, eviction hints, split counts, a one-launch split with an atomic ticket, a one-pass
decoupled look-back scan, the Liger layout of the cross-entropy gradient) and ceilings of the same bytes (torch.sum
and a Triton pure-read kernel for read-only ops, a device copy for the scan). Every variant is checked against the
PyTorch result before it is timed (a wrong one is reported, not timed); every variant fails soft.
Timing: triton.testing.do_bench(warmup=25, rep=100, median). host_ms: CPU time per call, 20 back-to-back calls
between two syncs (vs_liger.py's _host_ms, with no_grad). %copy: (minimum bytes read + written) / time against
this GPU's copy rate (1 GiB device copy); %read: against torch.sum over 1 GiB (the roofline of read-only ops).
Writes $OUT/explore_reductions.json; prints the table last.
"""

# ruff: noqa: B023 - every closure made in a loop runs (checked and timed) within the iteration that made it
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl
import triton.testing

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
ROWS_OUT: list[dict[str, Any]] = []
T0 = time.perf_counter()
BUDGET = [165.0]


def _load(example: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"explore_{example}", ROOT / "examples" / example / "stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _left() -> float:
    return BUDGET[0] - (time.perf_counter() - T0)


def _host_ms(fn: Callable[[], Any], calls: int = 20) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        with torch.no_grad():
            fn()
    host = (time.perf_counter() - t0) / calls * 1e3
    torch.cuda.synchronize()
    return host


def _close(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> float | None:
    """None when close, else the worst excess."""
    o, r = out.float(), ref.float()
    if o.shape != r.shape:
        return float("inf")
    if not o.numel():
        return None
    excess = ((o - r).abs() - atol - rtol * r.abs()).max().item()
    return None if excess <= 0 and not torch.isnan(o).any().item() else excess


def bench(op: str, shape: str, name: str, fn: Callable[[], Any], moved: int, rates: dict[str, float],
          check: Callable[[], float | None] | None = None, note: str = "", host: bool = True) -> None:
    """Check, then time one variant; append a row (or the error) to ROWS_OUT."""
    row: dict[str, Any] = {"op": op, "shape": shape, "variant": name, "note": note}
    if _left() < 0:
        row["error"] = "skipped: time budget spent"
        ROWS_OUT.append(row)
        return
    try:
        with torch.no_grad():
            fn()
            torch.cuda.synchronize()
            bad = check() if check else None
        if bad is not None:
            row["error"] = f"wrong result (max excess {bad:.3g}); not timed"
        else:
            with torch.no_grad():
                ms = float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
            row["ms"] = round(ms, 5)
            if host:
                row["host_ms"] = round(_host_ms(fn), 4)
            if moved:
                gbps = moved / ms / 1e6
                row["gbps"] = round(gbps, 1)
                row["pct_copy"] = round(100 * gbps / rates["copy"], 1)
                row["pct_read"] = round(100 * gbps / rates["read"], 1)
    except Exception as e:  # noqa: BLE001 - one variant failing must not hide the others
        row["error"] = f"{type(e).__name__}: {str(e)[:240]}"
        row["trace"] = traceback.format_exc()[-600:]
    ROWS_OUT.append(row)
    print(json.dumps({k: v for k, v in row.items() if k != "trace"}), flush=True)


def rates() -> dict[str, float]:
    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    copy = min(triton.testing.do_bench(lambda: y.copy_(x), warmup=25, rep=100) for _ in range(2))
    read = min(triton.testing.do_bench(lambda: x.sum(), warmup=25, rep=100) for _ in range(2))
    return {"copy": 2 * (1 << 30) / copy / 1e6, "read": (1 << 30) / read / 1e6}


# ------------------------------------------------------------------------------------------------ ceilings
@triton.jit
def read_rows_kernel(x_ptr, out_ptr, M, N, stride_row, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    """Pure read of the same bytes and grid as a one-pass row reduction: the ceiling of logsumexp's kernel."""
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for c0 in range(0, N, BLOCK_N):
        c = c0 + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + rows[:, None] * stride_row + c[None, :], mask=(rows < M)[:, None] & (c < N)[None, :],
                       other=0.0).to(tl.float32)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty), mask=rows < M)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# ------------------------------------------------------------------------------------------------ logsumexp
@triton.jit
def lse_var_kernel(x_ptr, out_ptr, part_ptr, M, N, seg_len, stride_row, n_tiles, BLOCK_N: tl.constexpr,
                   ROWS: tl.constexpr, SPLIT: tl.constexpr, PROGS: tl.constexpr, EVICT: tl.constexpr):
    """stage3's online kernel plus: a grid-stride loop over row tiles (PROGS programs; PROGS >= n_tiles is the plain
    grid) and an evict-first hint. part: (2, M, SPLIT) pairs when SPLIT > 1."""
    split = tl.program_id(1)
    cols = tl.arange(0, BLOCK_N)
    c_begin = split * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    for tile in range(tl.program_id(0), n_tiles, PROGS):
        rows = (tile * ROWS + tl.arange(0, ROWS)).to(tl.int64)  # tile * ROWS < M fits int32
        row_ok = rows < M
        x_rows = x_ptr + rows[:, None] * stride_row
        m = tl.full((ROWS,), -float("inf"), dtype=tl.float32)
        s = tl.zeros((ROWS,), dtype=tl.float32)
        for c0 in range(c_begin, c_end, BLOCK_N):
            c = c0 + cols
            mask = row_ok[:, None] & (c[None, :] < c_end)
            if EVICT:
                x = tl.load(x_rows + c[None, :], mask=mask, other=-float("inf"), eviction_policy="evict_first")
            else:
                x = tl.load(x_rows + c[None, :], mask=mask, other=-float("inf"))
            x = x.to(tl.float32) * LOG2E
            m_c = tl.max(x, axis=1)
            m_c_safe = tl.where(m_c == -float("inf"), 0.0, m_c)
            s_c = tl.sum(tl.exp2(x - m_c_safe[:, None]), axis=1)
            m_n = tl.maximum(m, m_c)
            m_n_safe = tl.where(m_n == -float("inf"), 0.0, m_n)
            s = s * tl.exp2(m - m_n_safe) + s_c * tl.exp2(m_c - m_n_safe)
            m = m_n
        if SPLIT == 1:
            m_safe = tl.where(m == -float("inf"), 0.0, m)
            tl.store(out_ptr + rows, ((m_safe + tl.log2(s)) * LN2).to(out_ptr.dtype.element_ty), mask=row_ok)
        else:
            tl.store(part_ptr + rows * SPLIT + split, m, mask=row_ok)
            tl.store(part_ptr + M * SPLIT + rows * SPLIT + split, s, mask=row_ok)


@triton.jit
def lse_combine_kernel(part_ptr, out_ptr, M, SPLIT: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    parts = tl.arange(0, SPLIT)
    offs = rows[:, None] * SPLIT + parts[None, :]
    mask = (rows < M)[:, None]
    m_p = tl.load(part_ptr + offs, mask=mask, other=-float("inf"))
    s_p = tl.load(part_ptr + M * SPLIT + offs, mask=mask, other=0.0)
    m = tl.max(m_p, axis=1)
    m_safe = tl.where(m == -float("inf"), 0.0, m)
    s = tl.sum(s_p * tl.exp2(m_p - m_safe[:, None]), axis=1)
    tl.store(out_ptr + rows, ((m_safe + tl.log2(s)) * LN2).to(out_ptr.dtype.element_ty), mask=rows < M)


@triton.jit
def lse_ticket_kernel(x_ptr, out_ptr, part_ptr, count_ptr, M, N, seg_len, stride_row, BLOCK_N: tl.constexpr,
                      SPLIT: tl.constexpr):
    """One launch for split rows: each (row, segment) program writes its pair and takes a ticket; the row's last
    program combines the pairs and resets the row's counter to 0 (counters start zeroed, once)."""
    row = tl.program_id(0).to(tl.int64)
    split = tl.program_id(1)
    cols = tl.arange(0, BLOCK_N)
    c_begin = split * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    m = -float("inf")
    s = 0.0
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_row + c, mask=c < c_end, other=-float("inf")).to(tl.float32) * LOG2E
        m_n = tl.maximum(m, tl.max(x, axis=0))
        m_n_safe = tl.where(m_n == -float("inf"), 0.0, m_n)
        s = s * tl.exp2(m - m_n_safe) + tl.sum(tl.exp2(x - m_n_safe), axis=0)
        m = m_n
    tl.store(part_ptr + row * SPLIT + split, m)
    tl.store(part_ptr + M * SPLIT + row * SPLIT + split, s)
    ticket = tl.atomic_add(count_ptr + row, 1, sem="acq_rel")  # release our pair, acquire the others'
    if ticket == SPLIT - 1:
        parts = tl.arange(0, SPLIT)
        m_p = tl.load(part_ptr + row * SPLIT + parts, volatile=True)
        s_p = tl.load(part_ptr + M * SPLIT + row * SPLIT + parts, volatile=True)
        mm = tl.max(m_p, axis=0)
        mm_safe = tl.where(mm == -float("inf"), 0.0, mm)
        ss = tl.sum(s_p * tl.exp2(m_p - mm_safe), axis=0)
        tl.store(out_ptr + row, ((mm_safe + tl.log2(ss)) * LN2).to(out_ptr.dtype.element_ty))
        tl.store(count_ptr + row, 0)


def explore_logsumexp(r: dict[str, float]) -> None:
    mod = _load("logsumexp")
    launch = mod._FastLaunch
    for label, (M, N) in (("16384x4096", (16384, 4096)), ("64x1M", (64, 1 << 20))):
        g = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(M, N, device="cuda", generator=g).add_(2 * torch.randn(M, 1, device="cuda", generator=g))
        x = x.to(torch.bfloat16)
        ref = torch.logsumexp(x.float(), dim=-1)
        moved = x.numel() * 2 + M * 2
        out = torch.empty(M, device="cuda", dtype=torch.bfloat16)

        def chk(o=out):
            return _close(o, ref, 2e-2, 1e-2)

        bench("logsumexp", label, "stage3 (wrapper)", lambda: mod.logsumexp(x), moved, r,
              lambda: _close(mod.logsumexp(x), ref, 2e-2, 1e-2))
        comp = torch.compile(lambda t: torch.logsumexp(t.float(), dim=-1).to(t.dtype))
        bench("logsumexp", label, "torch.compile", lambda: comp(x), moved, r, lambda: _close(comp(x), ref, 2e-2, 1e-2))
        bench("logsumexp", label, "ceiling: torch.sum (same bytes)", lambda: x.sum(), moved, r)
        rs = launch(read_rows_kernel)
        for rows_, bn, w in ((1, 4096, 8), (1, 4096, 16), (2, 4096, 16), (4, 2048, 16)):
            if N < bn:
                continue
            grid = (triton.cdiv(M, rows_), 1, 1)
            bench("logsumexp", label, f"ceiling: triton pure read R{rows_} B{bn} w{w}",
                  lambda grid=grid, rows_=rows_, bn=bn, w=w: rs(("rd", rows_, bn, w), grid, x, out, M, N, x.stride(0),
                                                                BLOCK_N=bn, ROWS=rows_, num_warps=w), moved, r)
        var = launch(lse_var_kernel)
        comb = launch(lse_combine_kernel)
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        if M >= 1024:  # many rows: tile shape, warps, persistent grid, eviction hint
            cands = [(1, 4096, 4, 0, 0), (1, 4096, 8, 0, 0), (1, 4096, 16, 0, 0), (2, 4096, 16, 0, 0),
                     (1, 2048, 8, 0, 0), (2, 2048, 8, 0, 0), (4, 1024, 8, 0, 0), (4, 2048, 16, 0, 0),
                     (1, 4096, 16, 1, 0), (2, 4096, 16, 1, 0), (1, 4096, 8, 1, 0), (1, 4096, 16, 0, 1),
                     (2, 4096, 16, 0, 1)]  # (rows, BLOCK_N, warps, persistent, evict_first)
            for rows_, bn, w, persist, evict in cands:
                n_tiles = triton.cdiv(M, rows_)
                progs = min(n_tiles, sms * max(1, 64 // w)) if persist else n_tiles  # one full wave when persistent
                grid = (progs, 1, 1)
                key = ("v", rows_, bn, w, progs, evict)
                fn = (lambda key=key, grid=grid, rows_=rows_, bn=bn, w=w, progs=progs, evict=evict, n_tiles=n_tiles:
                      var(key, grid, x, out, out, M, N, N, x.stride(0), n_tiles, BLOCK_N=bn, ROWS=rows_, SPLIT=1,
                          PROGS=progs, EVICT=evict, num_warps=w))
                bench("logsumexp", label, f"R{rows_} B{bn} w{w}" + (" persistent" if persist else "") +
                      (" evict_first" if evict else ""), fn, moved, r, chk)
        else:  # few long rows: split count, warps, one launch with a ticket
            for split, bn, w in ((16, 4096, 16), (32, 4096, 16), (64, 4096, 16), (64, 4096, 8), (128, 4096, 8),
                                 (256, 2048, 8)):
                seg = triton.cdiv(triton.cdiv(N, bn), split) * bn
                part = torch.empty(2 * M * split, device="cuda", dtype=torch.float32)

                def two(split=split, bn=bn, w=w, seg=seg, part=part):
                    var(("s", split, bn, w), (M, split, 1), x, out, part, M, N, seg, x.stride(0), M, BLOCK_N=bn,
                        ROWS=1, SPLIT=split, PROGS=M, EVICT=0, num_warps=w)
                    comb(("c", split), (triton.cdiv(M, 16), 1, 1), part, out, M, SPLIT=split, ROWS=16)

                bench("logsumexp", label, f"split {split} B{bn} w{w} + combine (2 launches)", two, moved, r, chk)
                tick = launch(lse_ticket_kernel)
                counts = torch.zeros(M, device="cuda", dtype=torch.int32)

                def one(split=split, bn=bn, w=w, seg=seg, part=part, tick=tick, counts=counts):
                    tick(("t", split, bn, w), (M, split, 1), x, out, part, counts, M, N, seg, x.stride(0),
                         BLOCK_N=bn, SPLIT=split, num_warps=w)

                bench("logsumexp", label, f"split {split} B{bn} w{w} ticket (1 launch)", one, moved, r, chk)
        x = out = None  # free before the next shape


# ------------------------------------------------------------------------------------------------ prefix scan
@triton.jit
def scan_var_kernel(x_ptr, out_ptr, part_ptr, M, N, seg_len, stride_row, ROWS: tl.constexpr, SPLIT: tl.constexpr,
                    BLOCK_N: tl.constexpr, CARRY_SUM: tl.constexpr, REVERSE: tl.constexpr, EVICT: tl.constexpr):
    """stage3's scan_with_carry_kernel (contiguous rows) plus: the carry as a running tl.sum (CARRY_SUM; Triton 3.6
    asserted on it for fp32 once), segments visited last-first (REVERSE: the segments segment_sums read last may
    still sit in L2) and evict-first loads / stores."""
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    seg = tl.program_id(1)
    if REVERSE:
        seg = SPLIT - 1 - seg
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    c_begin = seg.to(tl.int64) * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    carry = tl.zeros((ROWS,), dtype=tl.float32)
    if SPLIT > 1:
        parts = tl.arange(0, SPLIT)
        pmask = row_ok[:, None] & (parts[None, :] < seg)
        carry = tl.sum(tl.load(part_ptr + rows[:, None] * SPLIT + parts[None, :], mask=pmask, other=0), axis=1)
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        mask = row_ok[:, None] & (c[None, :] < c_end)
        offs = rows[:, None] * stride_row + c[None, :]
        if EVICT:
            x = tl.load(x_ptr + offs, mask=mask, other=0, eviction_policy="evict_first")
        else:
            x = tl.load(x_ptr + offs, mask=mask, other=0)
        y = tl.cumsum(x, axis=1) + carry[:, None]
        if EVICT:
            tl.store(out_ptr + offs, y, mask=mask, eviction_policy="evict_first")
        else:
            tl.store(out_ptr + offs, y, mask=mask)
        if CARRY_SUM:
            carry += tl.sum(x, axis=1)
        else:
            carry = tl.sum(tl.where(cols[None, :] == BLOCK_N - 1, y, 0), axis=1)


@triton.jit
def seg_sums_kernel(x_ptr, part_ptr, M, N, seg_len, stride_row, SPLIT: tl.constexpr, BLOCK_N: tl.constexpr,
                    KEEP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    seg = tl.program_id(1)
    cols = tl.arange(0, BLOCK_N)
    c_begin = seg.to(tl.int64) * seg_len
    c_end = tl.minimum(c_begin + seg_len, N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        if KEEP:
            acc += tl.load(x_ptr + row * stride_row + c, mask=c < c_end, other=0, eviction_policy="evict_last")
        else:
            acc += tl.load(x_ptr + row * stride_row + c, mask=c < c_end, other=0)
    tl.store(part_ptr + row * SPLIT + seg, tl.sum(acc, axis=0))


@triton.jit
def scan_lookback_kernel(x_ptr, out_ptr, flag_ptr, val_ptr, N, tiles_per_row, n_tiles, BLOCK: tl.constexpr):
    """One pass (read once, write once) decoupled look-back scan over contiguous rows. Tiles take ids from an atomic
    ticket (flag[n_tiles]), so a tile's predecessors have started. flag[t]: 1 = aggregate val[2t] ready, 2 =
    inclusive prefix val[2t + 1] ready. Flags and ticket are zeroed before every launch."""
    t = tl.atomic_add(flag_ptr + n_tiles, 1)
    row = (t // tiles_per_row).to(tl.int64)
    tile = t % tiles_per_row
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0)
    y = tl.cumsum(x, axis=0)
    total = tl.sum(tl.where(tl.arange(0, BLOCK) == BLOCK - 1, y, 0.0), axis=0)
    prefix = total * 0.0
    if tile > 0:
        tl.store(val_ptr + 2 * t, total)
        tl.atomic_xchg(flag_ptr + t, 1, sem="release")
        j = t - 1
        done = 0
        spins = 0
        while (done == 0) & (spins < 100000):  # a bound, so that a broken variant fails its check, not hangs
            spins += 1
            f = tl.atomic_add(flag_ptr + j, 0, sem="acquire")
            if f == 2:
                prefix += tl.load(val_ptr + 2 * j + 1, volatile=True)
                done = 1
            elif f == 1:
                prefix += tl.load(val_ptr + 2 * j, volatile=True)
                j -= 1
    tl.store(val_ptr + 2 * t + 1, prefix + total)
    tl.atomic_xchg(flag_ptr + t, 2, sem="release")
    tl.store(out_ptr + row * N + offs, y + prefix, mask=mask)


def explore_prefix_scan(r: dict[str, float]) -> None:
    mod = _load("prefix_scan")
    launch = mod._FastLaunch
    for label, (M, N) in (("4096x16384", (4096, 16384)), ("16x1M", (16, 1 << 20))):
        x = torch.randn(M, N, device="cuda", generator=torch.Generator(device="cuda").manual_seed(0))
        ref = torch.cumsum(x.double(), dim=-1)
        atol = 3e-4 * max(1.0, (N / 1024) ** 0.5)
        moved = 2 * x.numel() * 4
        out = torch.empty_like(x)

        def chk(o=out):
            return _close(o, ref, atol, 1e-4)

        bench("prefix_scan", label, "stage3 (wrapper)", lambda: mod.cumsum(x), moved, r,
              lambda: _close(mod.cumsum(x), ref, atol, 1e-4))
        comp = torch.compile(lambda t: torch.cumsum(t, dim=-1))
        bench("prefix_scan", label, "torch.compile", lambda: comp(x), moved, r, lambda: _close(comp(x), ref, atol, 1e-4))
        bench("prefix_scan", label, "ceiling: torch copy_ (same bytes)", lambda: out.copy_(x), moved, r)
        cp = launch(copy_kernel)
        bench("prefix_scan", label, "ceiling: triton copy B4096 w8",
              lambda: cp(("cp",), (triton.cdiv(x.numel(), 4096), 1, 1), x, out, x.numel(), BLOCK=4096, num_warps=8),
              moved, r)
        var = launch(scan_var_kernel)
        if M >= 1024:
            for rows_, bn, w, cs, ev in ((1, 1024, 4, 0, 0), (1, 2048, 4, 0, 0), (1, 2048, 8, 0, 0),
                                         (1, 4096, 8, 0, 0), (1, 4096, 16, 0, 0), (1, 8192, 16, 0, 0),
                                         (2, 2048, 8, 0, 0), (2, 4096, 16, 0, 0), (1, 2048, 8, 0, 1),
                                         (1, 4096, 16, 0, 1), (1, 2048, 8, 1, 0)):
                fn = (lambda rows_=rows_, bn=bn, w=w, cs=cs, ev=ev:
                      var(("v", rows_, bn, w, cs, ev), (triton.cdiv(M, rows_), 1, 1), x, out, out, M, N, N, N,
                          ROWS=rows_, SPLIT=1, BLOCK_N=bn, CARRY_SUM=cs, REVERSE=0, EVICT=ev, num_warps=w))
                bench("prefix_scan", label, f"R{rows_} B{bn} w{w}" + (" carry=sum" if cs else "") +
                      (" evict_first" if ev else ""), fn, moved, r, chk)
        else:
            sums = launch(seg_sums_kernel)
            for split, bn, w, rev, keep in ((64, 4096, 16, 0, 0), (64, 4096, 16, 1, 0), (64, 4096, 16, 1, 1),
                                            (128, 4096, 16, 1, 0), (128, 2048, 8, 1, 0), (256, 2048, 8, 1, 0),
                                            (32, 4096, 16, 1, 0), (128, 4096, 8, 1, 1)):
                seg = triton.cdiv(triton.cdiv(N, bn), split) * bn
                part = torch.empty(M * split, device="cuda", dtype=torch.float32)

                def two(split=split, bn=bn, w=w, rev=rev, keep=keep, seg=seg, part=part):
                    sums(("s", split, bn, w, keep), (M, split, 1), x, part, M, N, seg, N, SPLIT=split, BLOCK_N=bn,
                         KEEP=keep, num_warps=w)
                    var(("t", split, bn, w, rev), (M, split, 1), x, out, part, M, N, seg, N, ROWS=1, SPLIT=split,
                        BLOCK_N=bn, CARRY_SUM=0, REVERSE=rev, EVICT=0, num_warps=w)

                bench("prefix_scan", label, f"split {split} B{bn} w{w}" + (" reverse" if rev else "") +
                      (" evict_last sums" if keep else "") + " (2 launches, x read twice)", two, moved, r, chk)
        # One-pass look-back: read once, write once; for every shape (a row is N / BLOCK tiles).
        look = launch(scan_lookback_kernel)
        for bn, w in ((4096, 8), (4096, 16), (8192, 16), (2048, 8)):
            if _left() < 20:
                break
            tpr = triton.cdiv(N, bn)
            flags = torch.zeros(M * tpr + 1, device="cuda", dtype=torch.int32)
            vals = torch.empty(2 * M * tpr, device="cuda", dtype=torch.float32)

            def lb(bn=bn, w=w, tpr=tpr, flags=flags, vals=vals):
                flags.zero_()  # flags and the ticket (last element)
                look(("lb", bn, w), (M * tpr, 1, 1), x, out, flags, vals, N, tpr, M * tpr, BLOCK=bn, num_warps=w)

            bench("prefix_scan", label, f"look-back B{bn} w{w} (1 pass + memset)", lb, moved, r, chk)
        x = out = None  # free before the next shape


# ------------------------------------------------------------------------------------------------ cross-entropy
@triton.jit
def ce_fused_grad_kernel(logits_ptr, target_ptr, loss_ptr, grad_ptr, count_ptr, V, ignore_index,
                         BLOCK_V: tl.constexpr):
    """The Liger layout (gallery stage 3 before issue 20): the forward writes loss and (softmax - onehot) / n."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * V
    cols = tl.arange(0, BLOCK_V)
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    m = float("-inf")
    d = 0.0
    for v0 in range(0, tl.where(valid, V, 0), BLOCK_V):
        x = tl.load(row_ptr + v0 + cols, mask=v0 + cols < V, other=float("-inf")).to(tl.float32) * LOG2E
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
        m = m_new
    lse2 = tl.where(valid, m + tl.log2(d), 0.0)
    x_t = tl.load(row_ptr + tl.where(valid, target, 0)).to(tl.float32)
    tl.store(loss_ptr + row, tl.where(valid, lse2 * LN2 - x_t, 0.0))
    scale = tl.where(valid, 1.0 / tl.load(count_ptr), 0.0)
    for v0 in range(0, V, BLOCK_V):
        mask = v0 + cols < V
        x = tl.load(row_ptr + v0 + cols, mask=(v0 + cols) < tl.where(valid, V, 0), other=0.0).to(tl.float32)
        p = tl.exp2(x * LOG2E - lse2)
        g = tl.where(v0 + cols == target, p - 1.0, p) * scale
        tl.store(grad_ptr + row * V + v0 + cols, g.to(grad_ptr.dtype.element_ty), mask=mask)


@triton.jit
def scale_kernel(g_ptr, go_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    go = tl.load(go_ptr).to(tl.float32)
    if go != 1.0:
        g = tl.load(g_ptr + offs, mask=offs < n).to(tl.float32)
        tl.store(g_ptr + offs, (g * go).to(g_ptr.dtype.element_ty), mask=offs < n)


def explore_cross_entropy(r: dict[str, float]) -> None:
    mod = _load("cross_entropy")
    launch = mod._FastLaunch
    try:
        import liger_kernel.transformers.functional as LF  # noqa: N812
    except Exception as e:  # noqa: BLE001
        LF = None
        ROWS_OUT.append({"op": "cross_entropy", "variant": "liger", "error": f"not importable: {e}"[:200]})
    for label, (N, V) in (("8192x128256", (8192, 128256)), ("8192x32000", (8192, 32000))):
        g = torch.Generator(device="cuda").manual_seed(0)
        logits = torch.randn(N, V, device="cuda", generator=g).to(torch.bfloat16)
        t = torch.randint(0, V, (N,), device="cuda", generator=g)
        t[torch.randint(0, 5, (N,), device="cuda", generator=g) == 0] = -100
        t[0] = 0
        n_valid = int((t != -100).sum())
        ref = torch.nn.functional.cross_entropy(logits.float(), t, ignore_index=-100)
        moved = logits.numel() * 2  # every row read once (ignored rows are skipped: %copy may pass 100)
        valid_moved = n_valid * V * 2

        def chk_loss(fn):
            return lambda: _close(fn(), ref, 1e-2, 1e-2)

        f3 = lambda: mod.cross_entropy(logits, t)  # noqa: E731
        bench("cross_entropy", label, "fwd stage3 (wrapper)", f3, moved, r, chk_loss(f3),
              note=f"{n_valid}/{N} rows counted; bytes of counted rows only: {valid_moved / 1e9:.3f} GB")
        comp = torch.compile(lambda a, b: torch.nn.functional.cross_entropy(a.float(), b, ignore_index=-100))
        bench("cross_entropy", label, "fwd torch.compile", lambda: comp(logits, t), moved, r,
              chk_loss(lambda: comp(logits, t)))
        lig_buf = None
        if LF is not None:
            # Liger writes its gradient over its input: checked on a fresh copy, timed on one scratch copy.
            lig_buf = logits.clone()
            lig = lambda: LF.liger_cross_entropy(lig_buf, t, ignore_index=-100)  # noqa: E731
            bench("cross_entropy", label, "fwd liger", lig, moved, r,
                  chk_loss(lambda: LF.liger_cross_entropy(logits.clone(), t, ignore_index=-100)))
        bench("cross_entropy", label, "ceiling: torch.sum (same bytes)", lambda: logits.sum(), moved, r)
        stats = torch.empty(2 * N + 1, device="cuda", dtype=torch.float32)
        # fwd+bwd as vs_liger.py measures it (torch.autograd.grad with a random cotangent), and with a unit one
        leaf = logits.detach().requires_grad_(True)
        for go_name, cot in (("random cotangent", torch.randn((), device="cuda").to(torch.bfloat16)),
                             ("unit cotangent", torch.ones((), device="cuda", dtype=torch.bfloat16))):
            def fb3(cot=cot):
                with torch.enable_grad():
                    return torch.autograd.grad(mod.cross_entropy(leaf, t), [leaf], cot)

            bench("cross_entropy", label, f"fwd+bwd stage3, {go_name}", fb3, 0, r)

            def fbc(cot=cot):
                with torch.enable_grad():
                    return torch.autograd.grad(comp(leaf, t), [leaf], cot)

            bench("cross_entropy", label, f"fwd+bwd torch.compile, {go_name}", fbc, 0, r, host=False)
            if LF is not None:
                lg = lig_buf.requires_grad_(True)

                def fbl(cot=cot, lg=lg):
                    with torch.enable_grad():
                        return torch.autograd.grad(LF.liger_cross_entropy(lg, t, ignore_index=-100), [lg], cot)

                bench("cross_entropy", label, f"fwd+bwd liger, {go_name}", fbl, 0, r, host=False)
            # The Liger layout with the same kernels: fused grad in forward, then scale (skipped on device if 1)
            fused = launch(ce_fused_grad_kernel)
            sc = launch(scale_kernel)
            gbuf = torch.empty_like(logits)
            cnt = torch.full((1,), float(n_valid), device="cuda")

            def fbf(cot=cot, gbuf=gbuf, cnt=cnt):
                fused(("fg",), (N, 1, 1), logits, t, stats, gbuf, cnt, V, -100, BLOCK_V=8192 if V >= 8192 else 4096,
                      num_warps=16)
                sc(("sc",), (triton.cdiv(gbuf.numel(), 4096), 1, 1), gbuf, cot, gbuf.numel(), BLOCK=4096,
                   num_warps=8)
                return gbuf

            bench("cross_entropy", label, f"fwd+bwd Liger layout (grad in fwd + scale), {go_name}", fbf, 0, r,
                  host=False)
            gbuf = None
        # Forward kernel variants (stage3's kernel)
        fwd = launch(mod.cross_entropy_forward_kernel)
        mean = launch(mod.mean_loss_kernel)
        lossv = torch.empty((), device="cuda", dtype=torch.bfloat16)
        for bv, w in ((8192, 16), (8192, 8), (4096, 8), (16384, 16), (16384, 32)):
            def fk(bv=bv, w=w):
                fwd(("f", bv, w), (N, 1, 1), logits, t, stats, V, 1, N, V, -100, BLOCK_V=bv, SAVE_LSE=True,
                    num_warps=w)
                mean(("m",), (1, 1, 1), stats, t, lossv, N, -100, BLOCK_N=1024)
                return lossv

            bench("cross_entropy", label, f"fwd kernel B{bv} w{w}", fk, moved, r, chk_loss(fk))
        # Backward kernel variants: one read + one write (counted rows read; every row written)
        fk(8192 if V >= 8192 else 4096, 16)
        bwd = launch(mod.cross_entropy_backward_kernel)
        go = torch.full((), 0.37, device="cuda", dtype=torch.bfloat16)
        grad = torch.empty_like(logits)
        ref_grad = None
        try:
            lf = logits.float().requires_grad_(True)
            (torch.nn.functional.cross_entropy(lf, t, ignore_index=-100) * go.float()).backward()
            ref_grad = lf.grad.to(torch.bfloat16)
            del lf
        except Exception as e:  # noqa: BLE001
            ROWS_OUT.append({"op": "cross_entropy", "shape": label, "variant": "reference grad", "error": str(e)})
        bwd_moved = 2 * logits.numel() * 2
        for bv, w in ((4096, 8), (4096, 4), (2048, 4), (8192, 8), (8192, 16)):
            def bk(bv=bv, w=w):
                bwd(("b", bv, w), (N, triton.cdiv(V, bv), 1), logits, t, stats, go, grad, V, 1, V, N, V, -100,
                    BLOCK_V=bv, num_warps=w)
                return grad

            bench("cross_entropy", label, f"bwd kernel B{bv} w{w}", bk, bwd_moved, r,
                  (lambda bk=bk: _close(bk().float() * n_valid, ref_grad.float() * n_valid, 1e-5, 2e-2))
                  if ref_grad is not None else None)  # scaled by n_valid: the gradient itself is ~1e-9
        grad = ref_grad = None
        logits = leaf = stats = lig_buf = None
        torch.cuda.empty_cache()


def _table() -> str:
    lines = ["| op | shape | variant | ms | host ms | GB/s | % copy | % read | note |", "|" + "---|" * 9]
    for row in ROWS_OUT:
        if "error" in row:
            lines.append(f"| {row.get('op')} | {row.get('shape', '-')} | {row.get('variant')} | ERR | - | - | - | - | "
                         f"{row['error'][:110]} |")
        else:
            lines.append(f"| {row['op']} | {row['shape']} | {row['variant']} | {row['ms']:.4f} | "
                         f"{row.get('host_ms', '-')} | {row.get('gbps', '-')} | {row.get('pct_copy', '-')} | "
                         f"{row.get('pct_read', '-')} | {row.get('note', '')[:80]} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget-s", type=float, default=165.0)
    ap.add_argument("--only", default="cross_entropy,logsumexp,prefix_scan")  # the new fwd+bwd design first
    a = ap.parse_args()
    BUDGET[0] = a.budget_s
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    r = rates()
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "copy_gbps": round(r["copy"], 1), "read_gbps": round(r["read"], 1),
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    print(f"# {env}", flush=True)
    ops = {"logsumexp": explore_logsumexp, "prefix_scan": explore_prefix_scan, "cross_entropy": explore_cross_entropy}
    # Each op gets a deadline at its cumulative share of the budget (absolute: an op that ends early leaves its
    # time to the next), so that a slow one cannot starve the others.
    share = {"cross_entropy": 0.45, "logsumexp": 0.28, "prefix_scan": 0.27}
    names = a.only.split(",")
    total = sum(share.get(o, 1.0) for o in names)
    cum = 0.0
    for op in names:
        cum += share.get(op, 1.0)
        BUDGET[0] = a.budget_s * cum / total
        try:
            ops[op](r)
        except Exception as e:  # noqa: BLE001
            ROWS_OUT.append({"op": op, "variant": "(whole op)", "error": f"{type(e).__name__}: {str(e)[:200]}",
                             "trace": traceback.format_exc()[-800:]})
        torch.cuda.empty_cache()
        (OUT / "explore_reductions.json").write_text(json.dumps({"environment": env, "rows": ROWS_OUT}, indent=1))
    (OUT / "explore_reductions.json").write_text(json.dumps({"environment": env, "rows": ROWS_OUT}, indent=1))
    print(f"\n# {env}; total {time.perf_counter() - T0:.0f} s")
    print(_table())


if __name__ == "__main__":
    main()
