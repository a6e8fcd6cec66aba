"""Stage 3: one read of the logits forward, one read and one write backward; ignored rows never read.

- Forward: one program per row, online logsumexp over V chunks (as stage 2): the row is read from HBM once. Each row
  writes its loss and, when the logits need a gradient, its logsumexp (4 bytes a row); a one-program kernel takes
  the mean and the count of counted rows. Rows whose target is ignore_index add nothing to the loss, so their logits
  are not read at all (the loop runs zero times): about a fifth of the bytes in the benchmark's targets, as in
  Liger-Kernel.
- Backward: d(loss)/d(logits) = (softmax(x) - onehot(target)) * grad_output / n_valid, one element-wise pass over
  (row, chunk) programs that reads the logits once and writes the gradient once, with grad_output read on the
  device (no .item()). Ignored rows write zeros without reading. Total traffic forward + backward: 2 reads and 1
  write of N x V. The Liger-Kernel layout (the forward kernel writes the gradient, backward scales it in place unless
  grad_output is exactly 1) moves 2 reads + 1 write when grad_output is 1 but 3 reads + 2 writes otherwise (a loss
  divided by gradient-accumulation steps, a GradScaler's scale, torch.autograd.grad with a cotangent); this file
  always moves the former, holds no N x V buffer between forward and backward, and supports retain_graph.
- Host: under no_grad (or logits without requires_grad) no torch.autograd.Function; launches go through `_FastLaunch`
  (the compiled kernel's own launcher, 5 us instead of 17 us); per-shape choices are cached.
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


IGNORE_INDEX = -100
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def cross_entropy_forward_kernel(logits_ptr, target_ptr, stats_ptr, stride_row, stride_col, N, V, ignore_index,
                                 BLOCK_V: tl.constexpr, SAVE_LSE: tl.constexpr):
    # stats: [0, N) per-row loss, [N, 2N) per-row logsumexp in log2 units (SAVE_LSE), [2N] count of counted rows.
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK_V)
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    v_end = tl.where(valid, V, 0)  # an ignored row is not read
    # Online logsumexp, one HBM read of the row. A per-lane variant with one exp2 per element and no in-loop
    # reductions measured slower on the H200 (0.72 vs 0.65 ms at 8192 x 128256).
    m = float("-inf")
    d = 0.0
    for v0 in range(0, v_end, BLOCK_V):
        x = tl.load(row_ptr + (v0 + cols) * stride_col, mask=v0 + cols < V, other=float("-inf")).to(tl.float32)
        x = x * LOG2E
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
        m = m_new
    lse2 = m + tl.log2(d)  # log2 of sum(exp(x)); -inf for an ignored row
    x_t = tl.load(row_ptr + tl.where(valid, target, 0) * stride_col).to(tl.float32)
    tl.store(stats_ptr + row, tl.where(valid, lse2 * LN2 - x_t, 0.0))
    if SAVE_LSE:
        tl.store(stats_ptr + N + row, tl.where(valid, lse2, 0.0))  # finite: backward's p stays finite


@triton.jit
def mean_loss_kernel(stats_ptr, target_ptr, out_ptr, N, ignore_index, BLOCK_N: tl.constexpr):
    # One deterministic program (N is thousands of tokens) rather than an atomic_add of per-row losses.
    offs = tl.arange(0, BLOCK_N)
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    count = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for n0 in range(0, N, BLOCK_N):
        mask = n0 + offs < N
        total += tl.load(stats_ptr + n0 + offs, mask=mask, other=0.0)
        t = tl.load(target_ptr + n0 + offs, mask=mask, other=ignore_index)
        count += (t != ignore_index).to(tl.int32)
    n_valid = tl.sum(count, axis=0).to(tl.float32)
    tl.store(out_ptr, (tl.sum(total, axis=0) / n_valid).to(out_ptr.dtype.element_ty))  # 0/0 = NaN, as in torch
    tl.store(stats_ptr + 2 * N, n_valid)  # backward divides by it


@triton.jit
def cross_entropy_backward_kernel(logits_ptr, target_ptr, stats_ptr, grad_out_ptr, grad_ptr, stride_row,
                                  stride_col, stride_grow, N, V, ignore_index, BLOCK_V: tl.constexpr):
    # One BLOCK_V chunk of one row per program: an element-wise pass, one read of x and one write of the gradient.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    mask = cols < V
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    scale = tl.where(valid, tl.load(grad_out_ptr).to(tl.float32) / tl.load(stats_ptr + 2 * N), 0.0)
    lse2 = tl.load(stats_ptr + N + row)
    read = cols < tl.where(valid, V, 0)  # an ignored row is not read
    x = tl.load(logits_ptr + row * stride_row + cols * stride_col, mask=read, other=0.0).to(tl.float32)
    p = tl.exp2(x * LOG2E - lse2)
    g = tl.where(cols == target, p - 1.0, p) * scale  # ignored rows: exact zeros (scale 0, p finite)
    tl.store(grad_ptr + row * stride_grow + cols, g.to(grad_ptr.dtype.element_ty), mask=mask)


_FORWARD = _FastLaunch(cross_entropy_forward_kernel)
_MEAN = _FastLaunch(mean_loss_kernel)
_BACKWARD = _FastLaunch(cross_entropy_backward_kernel)
_PLANS: dict[tuple, tuple] = {}  # (V, device) -> block sizes and warps


def _plan(V: int, device: torch.device) -> tuple:
    # Forward: 4096-wide chunks over 4 warps, 32 values per thread: on the H200 (2026-12-04, bf16) 0.410 ms at
    # 8192x128256 and 0.126 ms at 8192x32000, against 0.527 / 0.161 ms for 8192-wide chunks over 16 warps (more
    # independent loads in flight per thread). Backward: 4096-wide chunks over 8 warps, the element-wise shape
    # inductor picks for such passes (all backward variants measured within 2 % of each other).
    block_f = min(triton.next_power_of_2(V), 4096)
    warps_f = 4
    block_b = min(triton.next_power_of_2(V), 4096)
    warps_b = 8 if block_b >= 4096 else 4
    dev = device.index
    return block_f, warps_f, block_b, warps_b, triton.cdiv(V, block_b), (V, block_f, warps_f, dev), \
        (V, block_b, warps_b, dev)


def _forward(logits: torch.Tensor, target: torch.Tensor, save_lse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean loss in logits' dtype, stats buffer: per-row loss, per-row logsumexp if save_lse, count)."""
    N, V = logits.shape
    pkey = (V, logits.device)
    plan = _PLANS.get(pkey)
    if plan is None:
        plan = _PLANS[pkey] = _plan(V, logits.device)
    block_f, warps_f, _, _, _, key_f, _ = plan
    stats = torch.empty((2 * N + 1,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    if N > 0:
        _FORWARD((key_f, save_lse), (N, 1, 1), logits, target, stats, logits.stride(0), logits.stride(1), N, V,
                 IGNORE_INDEX, BLOCK_V=block_f, SAVE_LSE=save_lse, num_warps=warps_f)
    _MEAN(logits.device.index, (1, 1, 1), stats, target, out, N, IGNORE_INDEX, BLOCK_N=1024)
    return out, stats


class CrossEntropyFunction(torch.autograd.Function):
    """Mean cross-entropy; backward recomputes softmax from the saved per-row logsumexp in one pass."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        out, stats = _forward(logits, target, True)
        ctx.save_for_backward(logits, target, stats)
        return out

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        logits, target, stats = ctx.saved_tensors
        N, V = logits.shape
        _, _, block_b, warps_b, n_chunks, _, key_b = _PLANS[(V, logits.device)]
        grad = torch.empty((N, V), device=logits.device, dtype=logits.dtype)
        if grad.numel():
            _BACKWARD(key_b, (N, n_chunks, 1), logits, target, stats, grad_output, grad, logits.stride(0),
                      logits.stride(1), V, N, V, IGNORE_INDEX, BLOCK_V=block_b, num_warps=warps_b)
        return grad, None


def _check(logits: torch.Tensor, target: torch.Tensor) -> None:
    if logits.dim() != 2 or target.dim() != 1 or target.shape[0] != logits.shape[0]:
        raise ValueError(
            f"expected logits (N, V) and target (N,), got {tuple(logits.shape)} and {tuple(target.shape)}"
        )
    if target.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"target must hold integer class indices, got {target.dtype}")


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy with ignore_index=-100; differentiable in the logits."""
    _check(logits, target)
    if target.stride(0) != 1:
        target = target.contiguous()  # the kernels index target[row] without a stride
    if logits.requires_grad and torch.is_grad_enabled():
        return CrossEntropyFunction.apply(logits, target)
    return _forward(logits, target, False)[0]  # no autograd node, no logsumexp written
