"""Stage 3: one pass over HBM with the online (max, sum-exp) semiring, multi-row tiles, split long rows.

The pair (m, s) standing for s * exp(m) combines associatively:
    (m1, s1) + (m2, s2) = (M, s1 * exp(m1 - M) + s2 * exp(m2 - M)),  M = max(m1, m2)
so a row can be reduced in any order and any grouping, in a single read (stage 2 reads it twice):
- per chunk: each BLOCK_N-wide chunk is reduced to its own pair (max, sum of exp(x - max)) and folded into the
  row's running pair: one exp2 per element, two per chunk;
- per tile: short rows are processed ROWS at a time in a [ROWS, BLOCK_N] tile;
- per program: when there are too few rows to fill the GPU (64 rows of 1M), each row is cut into SPLIT
  segments handled by different programs, which write their pairs; a tiny second kernel combines them.
Math in fp32 and base 2 (x * log2(e), exp2, log2), converted back with ln(2). Per-chunk rather than per-lane
running state: examples/cross_entropy/stage3.py measured the per-lane variant slower on the H200.
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
LN2 = tl.constexpr(0.6931471805599453)
MAX_SPLIT = 64
CONFIGS = [triton.Config({}, num_warps=w) for w in (4, 8, 16)]
_SM_COUNT: dict[int, int] = {}


def _prune(configs, named_args, **kwargs):
    # Keep 8-32 elements per thread of the [ROWS, BLOCK_N] tile; one config under the interpreter.
    tile = kwargs["ROWS"] * kwargs["BLOCK_N"]
    ok = [c for c in configs if 8 <= tile // (32 * c.num_warps) <= 32] or configs[:1]
    return ok[:1] if INTERPRET else ok


@triton.jit
def _combine(m_a, s_a, m_b, s_b):
    """(m_a, s_a) + (m_b, s_b) in log2 units; -inf maxima (no data yet) give no NaN."""
    m = tl.maximum(m_a, m_b)
    m_safe = tl.where(m == -float("inf"), 0.0, m)
    return m, s_a * tl.exp2(m_a - m_safe) + s_b * tl.exp2(m_b - m_safe)


@triton.autotune(configs=CONFIGS, key=["N", "BLOCK_N", "ROWS", "SPLIT"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def logsumexp_online_kernel(x_ptr, out_ptr, m_part_ptr, s_part_ptr, M, N, seg_len, stride_row, stride_col,
                            BLOCK_N: tl.constexpr, ROWS: tl.constexpr, SPLIT: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)  # int64 row offsets
    split = tl.program_id(1)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    c_begin = split * seg_len  # seg_len is a multiple of BLOCK_N
    c_end = tl.minimum(c_begin + seg_len, N)
    x_rows = x_ptr + rows[:, None] * stride_row
    m = tl.full((ROWS,), -float("inf"), dtype=tl.float32)  # running pair per row, log2 units
    s = tl.zeros((ROWS,), dtype=tl.float32)
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = c0 + cols
        mask = row_ok[:, None] & (c[None, :] < c_end)
        x = tl.load(x_rows + c[None, :] * stride_col, mask=mask, other=-float("inf")).to(tl.float32) * LOG2E
        m_c = tl.max(x, axis=1)  # the chunk's pair (m_c, s_c)
        m_c_safe = tl.where(m_c == -float("inf"), 0.0, m_c)
        s_c = tl.sum(tl.exp2(x - m_c_safe[:, None]), axis=1)
        m, s = _combine(m, s, m_c, s_c)
    if SPLIT == 1:
        m_safe = tl.where(m == -float("inf"), 0.0, m)  # N = 0: s = 0 and the result is -inf, not NaN
        tl.store(out_ptr + rows, ((m_safe + tl.log2(s)) * LN2).to(out_ptr.dtype.element_ty), mask=row_ok)
    else:
        tl.store(m_part_ptr + rows * SPLIT + split, m, mask=row_ok)
        tl.store(s_part_ptr + rows * SPLIT + split, s, mask=row_ok)


@triton.jit
def combine_splits_kernel(m_part_ptr, s_part_ptr, out_ptr, M, SPLIT: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    parts = tl.arange(0, SPLIT)
    mask = (rows < M)[:, None] & (parts < SPLIT)[None, :]
    offs = rows[:, None] * SPLIT + parts[None, :]
    m_p = tl.load(m_part_ptr + offs, mask=mask, other=-float("inf"))
    s_p = tl.load(s_part_ptr + offs, mask=mask, other=0.0)
    m = tl.max(m_p, axis=1)
    m_safe = tl.where(m == -float("inf"), 0.0, m)
    s = tl.sum(s_p * tl.exp2(m_p - m_safe[:, None]), axis=1)
    tl.store(out_ptr + rows, ((m_safe + tl.log2(s)) * LN2).to(out_ptr.dtype.element_ty), mask=rows < M)


def _sm_count(device: torch.device) -> int:
    """SM count on a GPU; 1 under the interpreter (few rows then get split, so the combine path runs)."""
    if device.type != "cuda":
        return 1
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


_ONLINE = _FastLaunch(logsumexp_online_kernel)
_COMBINE = _FastLaunch(combine_splits_kernel)
_PLANS: dict[tuple, tuple] = {}  # (shape, strides, dtype, device) -> launch plan, decided once per shape


def _plan(x: torch.Tensor) -> tuple:
    """Block sizes, split and grid for one input layout (pure Python, cached by the caller)."""
    M, N = x.shape
    block_n = min(max(triton.next_power_of_2(N), 16), 4096)
    rows = max(1, min(16, 2048 // block_n))  # short rows: several per tile
    n_tiles = triton.cdiv(M, rows)
    n_chunks = max(1, triton.cdiv(N, block_n))
    # Split rows across programs only when the row tiles alone cannot give every SM 4 programs. SPLIT is a
    # power of 2; a segment past the row's end holds no data and writes the neutral pair (-inf, 0).
    want = 4 * _sm_count(x.device)
    split = 1
    if n_tiles < want and n_chunks >= 4:
        split = min(MAX_SPLIT, triton.next_power_of_2(triton.cdiv(want, n_tiles)), triton.next_power_of_2(n_chunks // 2))
    seg_len = triton.cdiv(n_chunks, split) * block_n
    key = (N, block_n, rows, split, x.device.index)
    return (M, N, block_n, rows, split, seg_len, (n_tiles, split, 1), (triton.cdiv(M, 16), 1, 1), key,
            x.stride(0), x.stride(1))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """logsumexp over the last dim of a 2-D tensor of any strides."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    pkey = (x.shape, x.stride(), x.dtype, x.device)
    plan = _PLANS.get(pkey)
    if plan is None:
        plan = _PLANS[pkey] = _plan(x)
    M, N, block_n, rows, split, seg_len, grid, grid_combine, key, stride_row, stride_col = plan
    out = torch.empty((M,), dtype=x.dtype, device=x.device)
    if M == 0:
        return out
    if split == 1:
        # part pointers never touched: the SPLIT == 1 kernel writes the result directly
        _ONLINE(key, grid, x, out, out, out, M, N, seg_len, stride_row, stride_col,
                BLOCK_N=block_n, ROWS=rows, SPLIT=split)
        return out
    part = torch.empty((2, M, split), dtype=torch.float32, device=x.device)  # (max, sum) pairs, one allocation
    _ONLINE(key, grid, x, out, part[0], part[1], M, N, seg_len, stride_row, stride_col,
            BLOCK_N=block_n, ROWS=rows, SPLIT=split)
    _COMBINE((split, x.device.index), grid_combine, part[0], part[1], out, M, SPLIT=split, ROWS=16)
    return out
