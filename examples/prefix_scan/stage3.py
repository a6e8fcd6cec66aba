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

import inspect
import os

import torch
import triton
import triton.language as tl

try:
    from triton import knobs as _knobs  # Triton >= 3.4: where launch hooks live
except ImportError:  # pragma: no cover - older Triton: no fast path
    _knobs = None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


class _FastLaunch:
    """Launch a @triton.jit (or @triton.autotune) kernel straight through its compiled binary once `key` has been
    compiled, skipping Triton's per-call binder and autotuner dispatch: on the H200 (Triton 3.6) a JITFunction
    launch costs 17 us of host time, the compiled kernel's own launcher 5 us. The first call per key (and every call
    under the interpreter, with a launch hook set, or on a Triton whose CompiledKernel lacks this API) goes through
    the ordinary launch. The key must fix everything the kernel is specialized on besides what is checked here
    (tensor dtypes, pointer alignment and the integer arguments' value classes are added to it): the constexpr
    choices, the autotuner's key arguments and the device.
    Runtime arguments go positionally, in the kernel's parameter order; constexprs as keywords."""

    def __init__(self, kernel):
        self.kernel = kernel
        jit = kernel
        while hasattr(jit, "fn") and hasattr(jit.fn, "arg_names"):
            jit = jit.fn  # through Autotuner / Heuristics wrappers down to the JITFunction
        self.names = list(jit.arg_names)
        self.defaults = {n: p.default for n, p in inspect.signature(jit.fn).parameters.items()
                         if p.default is not p.empty}
        self.cache: dict = {}
        self.hits = 0  # launches that took the cached path (tests check it engages)
        self.ok = not INTERPRET and _knobs is not None

    @staticmethod
    def _hooked() -> bool:
        # Launch hooks (a profiler's) must see every launch. Triton >= 3.5 keeps them in a HookChain that is empty,
        # not None, when nothing is registered (an `is None` test alone never took this path on Triton 3.6);
        # older Triton has None or a callable.
        rt = _knobs.runtime
        return any(h is not None and getattr(h, "calls", True) for h in (rt.launch_enter_hook, rt.launch_exit_hook))

    @staticmethod
    def _spec(args) -> tuple:
        # What Triton specializes a launch on, besides dtypes: 16-byte aligned pointers, ints equal to 1 or
        # divisible by 16. A kernel compiled for one class must not be launched with another.
        return tuple((a.dtype, (a.data_ptr() & 15) == 0) if isinstance(a, torch.Tensor) else
                     (a == 1, a % 16 == 0) if isinstance(a, int) else None for a in args)

    def __call__(self, key, grid, *args, **kwargs) -> None:
        full_key = (key, self._spec(args))
        hit = self.cache.get(full_key) if self.ok else None
        if hit is not None and not self._hooked():
            self.hits += 1
            run, function, packed, tail, dev = hit
            full = args + tail  # the constexprs, fixed by `key`, resolved once at compile time
            g = grid(dict(zip(self.names, full))) if callable(grid) else grid
            run(g[0], g[1] if len(g) > 1 else 1, g[2] if len(g) > 2 else 1,
                torch._C._cuda_getCurrentRawStream(dev), function, packed, None, None, None, *full)
            return
        compiled = self.kernel[grid](*args, **kwargs)
        if not self.ok:
            return
        try:
            if hasattr(compiled, "result"):
                compiled = compiled.result()
            best = getattr(self.kernel, "best_config", None)
            if best is not None and best.pre_hook is not None:
                self.ok = False  # a config pre-hook (zeroing a buffer, ...) must run on every launch
                return
            consts = {**self.defaults, **(best.kwargs if best is not None else {}), **kwargs}
            dev = next(a.device.index for a in args if isinstance(a, torch.Tensor))
            tail = tuple(consts[n] for n in self.names[len(args):])
            self.cache[full_key] = (compiled.run, compiled.function, compiled.packed_metadata, tail, dev)
        except Exception:  # noqa: BLE001 - an older or newer Triton without this API: the ordinary launch always
            self.ok = False


MAX_SPLIT = 64
# (8192, 16) added after the H200 run of 2026-12-04: 0.1404 ms at 4096x16384 fp32 (90 % of copy) against 0.1430 for
# what the autotuner had picked from the others.
_CONFIGS = [triton.Config({"BLOCK_N": b}, num_warps=w) for b, w in ((512, 4), (1024, 4), (1024, 8), (2048, 8),
                                                                    (2048, 16), (4096, 16), (8192, 16))]
# The interpreter gets one small chunk: rows of ~1000 then take several steps, so the carry is exercised.
CONFIGS = [triton.Config({"BLOCK_N": 256}, num_warps=4)] if INTERPRET else _CONFIGS
SEG_ALIGN = max(c.kwargs["BLOCK_N"] for c in CONFIGS)
_SM_COUNT: dict[int, int] = {}


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


_SUMS = _FastLaunch(segment_sums_kernel)
_SCAN = _FastLaunch(scan_with_carry_kernel)
_PLANS: dict[tuple, tuple] = {}  # (shape, strides, dtype, device) -> launch plan, decided once per shape


def _plan(x: torch.Tensor) -> tuple:
    """Tile rows, split and grid for one input layout (pure Python, cached by the caller)."""
    M, N = x.shape
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
    meta = dict(ACC=acc, ROWS=rows, SPLIT=split, ROW_WIDTH=width)
    key = (N, rows, split, width, str(acc), x.device.index)  # the autotuner's key plus every constexpr
    part_dtype = torch.float32 if x.is_floating_point() else torch.int32
    return M, N, split, seg_len, (n_tiles, split, 1), meta, key, part_dtype, x.stride(0), x.stride(1)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive cumsum over the last dim of a 2-D tensor of any strides and length."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    pkey = (x.shape, x.stride(), x.dtype, x.device)
    plan = _PLANS.get(pkey)
    if plan is None:
        plan = _PLANS[pkey] = _plan(x)
    M, N, split, seg_len, grid, meta, key, part_dtype, stride_r, stride_c = plan
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if M == 0 or N == 0:
        return out
    if split > 1:
        part = torch.empty((M, split), dtype=part_dtype, device=x.device)
        _SUMS(("sums", *key), grid, x, part, M, N, seg_len, stride_r, stride_c, **meta)
    else:
        part = out  # never read: SPLIT == 1 starts every row at carry 0
    _SCAN(("scan", *key), grid, x, out, part, M, N, seg_len, stride_r, stride_c, N, **meta)
    return out
