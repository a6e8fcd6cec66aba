"""Stage 3: persistent multi-row softmax; rows too long for registers use an online (max, sum) pass.

- Persistent: a fixed grid of a few programs per SM walks the row blocks, so no wave of
  programs is launched and retired per few rows (16384 rows of 4096 bf16 would be 16384 programs in stage 1).
- Rows of up to 16384 elements are loaded once into registers as a [ROWS, BLOCK_N] tile (ROWS autotuned):
  one HBM read and one write per element, the minimum.
- Longer rows do not fit: pass 1 keeps a running max m and running sum d of exp(x - m) per row over
  4096-wide chunks (d <- d * exp(m_old - m_new) + sum(exp(x - m_new)): one exp per element), and pass 2
  writes exp(x - m) / d chunk by chunk. Stages 1 and 2 would pad such a row to a power of 2 in registers
  and spill.
- fp32 math everywhere, bf16/fp16 only at the load and the store; exp2 with log2(e) folded into the input.
- Host side (issue 20): at 16384 x 4096 bf16 the kernel takes 0.07 ms on an H200, about what a plain Triton
  launch costs in Python (JITFunction launch 17 us plus the autotuner's dispatch): the kernel goes through
  `_FastLaunch` (the compiled binary's own launcher once a key has been compiled) and the per-layout decisions
  (block size, grid) are cached in `_PLANS`.
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


LOG2E = tl.constexpr(1.4426950408889634)
MAX_SINGLE_BLOCK = 16384  # longest row kept whole in registers
CHUNK = 4096  # chunk width of the online path
# PPS: programs per SM for the persistent grid (a full SM holds 64 warps); PPS = 0 is the plain grid of one
# program per row block, which autotuning keeps where the persistent loop does not pay.
CONFIGS = [triton.Config({"ROWS": r, "PPS": pps}, num_warps=w)
           for r in (1, 2, 4, 8, 16) for w in (4, 8, 16, 32) for pps in (64 // w, 0)]
_SM_COUNT: dict[int, int] = {}


def _prune(configs, named_args, **kwargs):
    block_n, single = kwargs["BLOCK_N"], kwargs["SINGLE"]
    limit = 16384 if single else CHUNK  # the online path: one row per tile
    ok = [c for c in configs if c.kwargs["ROWS"] * block_n <= limit and
          8 <= c.kwargs["ROWS"] * block_n // (32 * c.num_warps) <= 64]
    if not ok:
        rows, warps = (16, 4) if block_n <= 256 else (1, 16)
        ok = [c for c in configs if c.kwargs["ROWS"] == rows and c.num_warps == warps]
    if INTERPRET:  # no timing on the CPU: the persistent tile with the most rows that fits, so every loop loops
        return [max(ok, key=lambda c: (c.kwargs["PPS"] > 0, c.kwargs["ROWS"], -c.num_warps))]
    return ok


@triton.jit
def _softmax_block(out_ptr, x_ptr, block, n_rows, n_cols, stride_xr, stride_xc, stride_or,
                   BLOCK_N: tl.constexpr, SINGLE: tl.constexpr, ROWS: tl.constexpr):
    rows = block * ROWS + tl.arange(0, ROWS)  # int64 row indices
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < n_rows
    x_rows = x_ptr + rows[:, None] * stride_xr
    o_rows = out_ptr + rows[:, None] * stride_or
    if SINGLE:
        mask = row_ok[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_rows + cols[None, :] * stride_xc, mask=mask, other=-float("inf")).to(tl.float32)
        x = x * LOG2E
        m = tl.where(row_ok, tl.max(x, axis=1), 0.0)  # padded rows: 0, not -inf, so no NaN appears
        e = tl.exp2(x - m[:, None])
        y = e * (1.0 / tl.sum(e, axis=1))[:, None]
        tl.store(o_rows + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)
    else:
        # Pass 1: online max m and sum d of exp(x - m) per row (log2 units), one read of the row. Each chunk
        # is reduced before it is folded in: one exp2 per element (a per-lane state would need two).
        m = tl.full((ROWS,), -float("inf"), dtype=tl.float32)
        d = tl.zeros((ROWS,), dtype=tl.float32)
        for c0 in range(0, n_cols, BLOCK_N):
            mask = row_ok[:, None] & (c0 + cols[None, :] < n_cols)
            x = tl.load(x_rows + (c0 + cols[None, :]) * stride_xc, mask=mask, other=-float("inf"))
            x = x.to(tl.float32) * LOG2E
            m_new = tl.maximum(m, tl.max(x, axis=1))
            m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)  # padded rows: no -inf - -inf
            d = d * tl.exp2(m - m_safe) + tl.sum(tl.exp2(x - m_safe[:, None]), axis=1)
            m = m_new
        m = tl.where(row_ok, m, 0.0)
        inv = 1.0 / d
        # Pass 2: normalize and write, chunk by chunk (the second read mostly hits L2 for one row).
        for c0 in range(0, n_cols, BLOCK_N):
            mask = row_ok[:, None] & (c0 + cols[None, :] < n_cols)
            x = tl.load(x_rows + (c0 + cols[None, :]) * stride_xc, mask=mask, other=0.0).to(tl.float32)
            y = tl.exp2(x * LOG2E - m[:, None]) * inv[:, None]
            tl.store(o_rows + c0 + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=CONFIGS, key=["n_cols", "BLOCK_N", "SINGLE"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def softmax_persistent_kernel(out_ptr, x_ptr, n_rows, n_cols, stride_xr, stride_xc, stride_or,
                              BLOCK_N: tl.constexpr, SINGLE: tl.constexpr, ROWS: tl.constexpr, PPS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    nprog = tl.num_programs(0).to(tl.int64)
    if PPS == 0:  # plain grid: one row block per program
        _softmax_block(out_ptr, x_ptr, pid, n_rows, n_cols, stride_xr, stride_xc, stride_or, BLOCK_N, SINGLE, ROWS)
    else:
        for i in tl.range(0, tl.cdiv(tl.cdiv(n_rows, ROWS) - pid, nprog)):  # row blocks pid, pid + nprog, ...
            _softmax_block(out_ptr, x_ptr, pid + i * nprog, n_rows, n_cols, stride_xr, stride_xc, stride_or,
                           BLOCK_N, SINGLE, ROWS)


def _programs(device: torch.device) -> int:
    """SM count on a GPU; 2 under the interpreter, so the persistent loop really loops."""
    if device.type != "cuda":
        return 2
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


_LAUNCH = _FastLaunch(softmax_persistent_kernel)
_PLANS: dict[tuple, list] = {}  # (shape, strides, dtype, device) -> launch plan, decided once per layout


def _grid_of(m: int, sms: int, pps_cap: int | None):
    """The grid as a function of the config; `last` keeps the grid of the latest launch, which is the chosen
    config's (the autotuner launches it last), so the plan can keep a fixed tuple from then on."""
    def grid(meta):
        blocks = triton.cdiv(m, meta["ROWS"])
        grid.last = (blocks if meta["PPS"] == 0 else min(blocks, sms * (pps_cap or meta["PPS"])), 1, 1)
        return grid.last
    grid.last = None
    return grid


def _plan(x: torch.Tensor) -> list:
    """[m, n, block_n, single, launch key, grid, contiguous?]: pure Python, once per layout."""
    m, n = x.shape
    single = n <= MAX_SINGLE_BLOCK
    block_n = triton.next_power_of_2(n) if single else CHUNK
    grid = _grid_of(m, _programs(x.device), 1 if x.device.type != "cuda" else None)
    return [m, n, block_n, single, (n, block_n, single, x.device.index), grid, x.is_contiguous()]


def reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim of a 2-D tensor, in fp32, returned in x's dtype."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    pkey = (x.shape, x.stride(), x.dtype, x.device)
    plan = _PLANS.get(pkey)
    if plan is None:
        plan = _PLANS[pkey] = _plan(x)
    m, n, block_n, single, key, grid, contiguous = plan
    # empty_like keeps a strided input's layout; the kernel writes rows with unit column stride
    out = torch.empty_like(x) if contiguous else torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m and n:
        _LAUNCH(key, grid, out, x, m, n, x.stride(0), x.stride(1), out.stride(0), BLOCK_N=block_n, SINGLE=single)
        if callable(grid) and grid.last is not None:  # the config is chosen: a fixed grid from the next call on
            plan[5] = grid.last
    return out
