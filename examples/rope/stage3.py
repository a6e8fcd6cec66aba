"""Stage 3: q and k in one launch over (token block, head block) tiles, and little host work per call.

Each program rotates a [BLOCK_H heads, BLOCK_S tokens, D] tile of q or of k (grid: token blocks x (q head blocks +
k head blocks) x batch), so cos and sin are loaded once per token block and reused by BLOCK_H heads, and a program
has BLOCK_H * BLOCK_S * D elements in flight at once instead of one token's heads walked one chunk after another
(stage 2's program per token left 72 % of the copy rate on the H200 at 4 x 32 x 4096 x 128: too few bytes in flight
per program). Every row is two half-row loads (x1 = x[..., :D/2], x2 = x[..., D/2:], 16-byte vectors), no mask
when the blocks divide S, the head counts and D/2. Contiguous q, k, cos and sin (the usual case) go through a
kernel that derives its strides from S, H and D (10 arguments instead of 24: less host time per launch); any other
layout (HF's (B, S, H, D) -> (B, H, S, D) transposed view, for one) through the same tile code with explicit strides.

Host side (issue 20): every kernel is launched through `_FastLaunch` (the compiled binary's own launcher: 5 us of
host time instead of Triton's 17 us), tile shapes, grids and launch keys are cached per layout in `_PLANS`, and
under no_grad (inference) the wrapper skips torch.autograd.Function. Backward is the transposed rotation through
the same kernels (BACKWARD). Math as stage 1.
"""

import inspect
import math
import os

import torch
import triton
import triton.language as tl

try:
    from triton import knobs as _knobs  # Triton >= 3.4: where launch hooks live
except ImportError:  # pragma: no cover - older Triton: no fast path
    _knobs = None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
# Tile: at most MAX_BLOCK_H heads (a power of 2 dividing both head counts) times BLOCK_S tokens, about HALF_TILE
# elements per half; num_warps WARPS. 2 heads x 1024 (8 tokens at D = 128) measured 0.0870 ms at 4x32x8x4096x128
# bf16 on the H200 against 0.0901 for 4 x 2048 (explore_glu_rope.py, vs_liger.py, 2026-12-04). Under the
# interpreter smaller tiles, so several token blocks and masked tails run on the validator's small cases.
MAX_BLOCK_H, HALF_TILE, WARPS = (2, 64, 4) if INTERPRET else (2, 1024, 4)


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


@triton.jit
def _rope_tile(x_ptr, y_ptr, x_off, y_off, n_h, n_s, stride_xh, stride_xs, stride_yh, stride_ys, c1, c2, s1, s2,
               HALF, BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr, MASKED: tl.constexpr,
               BACKWARD: tl.constexpr):
    """Rotate the [BLOCK_H, BLOCK_S, 2 * HALF] tile at x_ptr + x_off into y_ptr + y_off; n_h heads and n_s tokens
    of it are real (MASKED)."""
    heads = tl.arange(0, BLOCK_H)[:, None, None]
    toks = tl.arange(0, BLOCK_S)[None, :, None]
    cols = tl.arange(0, BLOCK_HALF)[None, None, :]
    xp = x_ptr + x_off + (heads * stride_xh + toks * stride_xs + cols)
    yp = y_ptr + y_off + (heads * stride_yh + toks * stride_ys + cols)
    if MASKED:
        mask = (heads < n_h) & (toks < n_s) & (cols < HALF)
        x1 = tl.load(xp, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(xp + HALF, mask=mask, other=0.0).to(tl.float32)
    else:
        x1 = tl.load(xp).to(tl.float32)
        x2 = tl.load(xp + HALF).to(tl.float32)
    if BACKWARD:  # the transposed rotation
        y1 = x1 * c1 + x2 * s2
        y2 = x2 * c2 - x1 * s1
    else:
        y1 = x1 * c1 - x2 * s1
        y2 = x2 * c2 + x1 * s2
    if MASKED:
        tl.store(yp, y1.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(yp + HALF, y2.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        tl.store(yp, y1.to(y_ptr.dtype.element_ty))
        tl.store(yp + HALF, y2.to(y_ptr.dtype.element_ty))


@triton.jit
def _rope_program(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, HALF,
                  stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                  stride_qob, stride_qoh, stride_qos, stride_kob, stride_koh, stride_kos, stride_cb, stride_cs,
                  BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr, MASKED: tl.constexpr,
                  BACKWARD: tl.constexpr):
    """One program: token block program_id(0), head block program_id(1) (q's, then k's), batch program_id(2)."""
    s0 = tl.program_id(0).to(tl.int64) * BLOCK_S
    hb = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    toks = tl.arange(0, BLOCK_S)[None, :, None]
    cols = tl.arange(0, BLOCK_HALF)[None, None, :]
    cp = b * stride_cb + s0 * stride_cs + (toks * stride_cs + cols)  # cos and sin: once per token block
    if MASKED:
        cmask = (toks < S - s0) & (cols < HALF)
        c1 = tl.load(cos_ptr + cp, mask=cmask, other=0.0).to(tl.float32)
        c2 = tl.load(cos_ptr + cp + HALF, mask=cmask, other=0.0).to(tl.float32)
        s1 = tl.load(sin_ptr + cp, mask=cmask, other=0.0).to(tl.float32)
        s2 = tl.load(sin_ptr + cp + HALF, mask=cmask, other=0.0).to(tl.float32)
    else:
        c1 = tl.load(cos_ptr + cp).to(tl.float32)
        c2 = tl.load(cos_ptr + cp + HALF).to(tl.float32)
        s1 = tl.load(sin_ptr + cp).to(tl.float32)
        s2 = tl.load(sin_ptr + cp + HALF).to(tl.float32)
    n_qb = tl.cdiv(H, BLOCK_H)
    if hb < n_qb:
        h0 = hb * BLOCK_H
        _rope_tile(q_ptr, qo_ptr, b * stride_qb + h0 * stride_qh + s0 * stride_qs,
                   b * stride_qob + h0 * stride_qoh + s0 * stride_qos, H - h0, S - s0, stride_qh, stride_qs,
                   stride_qoh, stride_qos, c1, c2, s1, s2, HALF, BLOCK_H, BLOCK_S, BLOCK_HALF, MASKED, BACKWARD)
    else:
        h0 = (hb - n_qb) * BLOCK_H
        _rope_tile(k_ptr, ko_ptr, b * stride_kb + h0 * stride_kh + s0 * stride_ks,
                   b * stride_kob + h0 * stride_koh + s0 * stride_kos, H_KV - h0, S - s0, stride_kh, stride_ks,
                   stride_koh, stride_kos, c1, c2, s1, s2, HALF, BLOCK_H, BLOCK_S, BLOCK_HALF, MASKED, BACKWARD)


@triton.jit
def rope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, HALF,
                stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                stride_qob, stride_qoh, stride_qos, stride_kob, stride_koh, stride_kos, stride_cb, stride_cs,
                BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr, MASKED: tl.constexpr,
                BACKWARD: tl.constexpr):
    """RoPE on q and k of any layout with a unit last-dim stride (cos and sin share their strides)."""
    _rope_program(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, HALF,
                  stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                  stride_qob, stride_qoh, stride_qos, stride_kob, stride_koh, stride_kos, stride_cb, stride_cs,
                  BLOCK_H, BLOCK_S, BLOCK_HALF, MASKED, BACKWARD)


@triton.jit
def rope_contiguous_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, stride_cb, D: tl.constexpr,
                           BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr,
                           MASKED: tl.constexpr, BACKWARD: tl.constexpr):
    """RoPE on contiguous q, k (and outputs) and cos, sin of (B or 1, S, D): strides from S, H and D."""
    _rope_program(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, D // 2,
                  H * S * D, S * D, D, H_KV * S * D, S * D, D, H * S * D, S * D, D, H_KV * S * D, S * D, D,
                  stride_cb, D, BLOCK_H, BLOCK_S, BLOCK_HALF, MASKED, BACKWARD)


_LAUNCH, _LAUNCH_CONTIGUOUS = _FastLaunch(rope_kernel), _FastLaunch(rope_contiguous_kernel)
_PLANS: dict[tuple, tuple] = {}  # layout -> (contiguous?, launch key, grid, constexprs)


def _plan(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, qo: torch.Tensor, ko: torch.Tensor,
          contiguous: bool, backward: bool) -> tuple:
    """(launch key, grid, constexprs) for this layout: pure Python, once per layout."""
    B, H, S, D = q.shape
    H_kv = k.shape[1]
    half = D // 2
    block_half = triton.next_power_of_2(half)
    # Head block: a power of 2 dividing both head counts (no half-empty head blocks), at most MAX_BLOCK_H.
    g = math.gcd(H, H_kv) or 1
    block_h = min(MAX_BLOCK_H, g & -g)
    block_s = max(1, min(triton.next_power_of_2(S), HALF_TILE // (block_h * block_half)))
    if not contiguous:
        # In-tile offsets are int32 unless a stride is over 2**31 (Triton then passes it as int64).
        reach = max((block_h - 1) * abs(t.stride(1)) + (block_s - 1) * abs(t.stride(2)) for t in (q, k, qo, ko))
        if reach + D >= 2**31:
            block_h = block_s = 1
    masked = S % block_s != 0 or H % block_h != 0 or H_kv % block_h != 0 or block_half != half
    kw = {"BLOCK_H": block_h, "BLOCK_S": block_s, "BLOCK_HALF": block_half, "MASKED": masked, "BACKWARD": backward,
          "num_warps": WARPS}
    if contiguous:
        kw["D"] = D
    grid = (triton.cdiv(S, block_s), triton.cdiv(H, block_h) + triton.cdiv(H_kv, block_h), B) if D else (0, 0, 0)
    ints = (S, H, H_kv, *q.stride(), *k.stride(), *qo.stride(), *ko.stride(), *cos.stride())
    key = (D, block_h, block_s, block_half, masked, backward, max(ints) >= 2**31, q.get_device())
    return key, grid, kw


def _last_dim_contiguous(t: torch.Tensor) -> torch.Tensor:
    return t if t.stride(-1) == 1 else t.contiguous()


def _apply(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, backward: bool):
    """Rotated (q, k) (backward: the transposed rotation), in the inputs' layouts when dense."""
    if (q.is_contiguous() and k.is_contiguous() and cos.is_contiguous() and sin.is_contiguous()
            and q.numel() < 2**31 and k.numel() < 2**31):
        qo, ko = torch.empty_like(q), torch.empty_like(k)
        pkey = (q.shape, k.shape, cos.shape[0], backward, q.get_device())
        plan = _PLANS.get(pkey)
        if plan is None:
            plan = _PLANS[pkey] = _plan(q, k, cos, qo, ko, True, backward)
        key, grid, kw = plan
        if grid[0] and grid[1] and grid[2]:
            B, H, S, D = q.shape
            _LAUNCH_CONTIGUOUS(key, grid, q, k, cos, sin, qo, ko, S, H, k.shape[1], S * D if cos.shape[0] > 1 else 0,
                               **kw)
        return qo, ko
    q, k = _last_dim_contiguous(q), _last_dim_contiguous(k)
    cos, sin = _last_dim_contiguous(cos), _last_dim_contiguous(sin)
    if cos.stride() != sin.stride():
        cos, sin = cos.contiguous(), sin.contiguous()  # the kernel indexes both with cos's strides
    qo, ko = torch.empty_like(q), torch.empty_like(k)  # keep the inputs' layout when dense (HF's transposed view)
    pkey = (q.shape, k.shape, q.stride(), k.stride(), qo.stride(), ko.stride(), cos.shape[0], cos.stride(), backward,
            q.get_device())
    plan = _PLANS.get(pkey)
    if plan is None:
        plan = _PLANS[pkey] = _plan(q, k, cos, qo, ko, False, backward)
    key, grid, kw = plan
    if grid[0] and grid[1] and grid[2]:
        B, H, S, D = q.shape
        stride_cb = cos.stride(0) if cos.shape[0] > 1 else 0  # batch dim 1: one cos row set for every batch
        _LAUNCH(key, grid, q, k, cos, sin, qo, ko, S, H, k.shape[1], D // 2, *q.stride()[:3], *k.stride()[:3],
                *qo.stride()[:3], *ko.stride()[:3], stride_cb, cos.stride(1), **kw)
    return qo, ko


class RoPEFunction(torch.autograd.Function):
    """RoPE on q and k with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, q, k, cos, sin):
        ctx.save_for_backward(cos, sin)
        return _apply(q, k, cos, sin, False)

    @staticmethod
    def backward(ctx, dq, dk):
        cos, sin = ctx.saved_tensors
        dq_in, dk_in = _apply(dq, dk, cos, sin, True)
        return dq_in, dk_in, None, None


def rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """(q_embed, k_embed), differentiable in q and k."""
    if (q.dim() != 4 or k.dim() != 4 or q.shape[-1] % 2 or k.shape[0] != q.shape[0] or k.shape[2:] != q.shape[2:]
            or cos.dim() != 3 or cos.shape != sin.shape or cos.shape[1:] != q.shape[2:]):
        raise ValueError(f"expected q (B, H, S, D), k (B, H_kv, S, D), cos and sin (B or 1, S, D) with D even; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(cos.shape)}, {tuple(sin.shape)}")
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad):
        return RoPEFunction.apply(q, k, cos, sin)
    return _apply(q, k, cos, sin, False)  # inference: no autograd node (less host time per call)
