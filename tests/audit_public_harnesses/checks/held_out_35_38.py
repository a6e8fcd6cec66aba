"""The known problems and the labelling checks of issue 45's two fresh pairs, held_out_35 (rotalabs-accel 1.1.1) +
held_out_36 (moe-ops 0.1.0) and held_out_37 (flashlib 0.4.0, torch-fps 0.6.0) + held_out_38 (fasterkernels 0.2.0,
fused-turboquant 0.1.0), one subcommand each, run on the corpus copies (tests/audit_public_corpus/...) with the callers'
inputs built by the batches' harnesses (tests/audit_public_harnesses/...). Written without running the audit on these
files (tests/audit_public_corpus/README.md, the held_out_35..38 sections).

Each subcommand exits 1 while the problem shows (wrong result, out-of-bounds write, crash, run-to-run difference, a
compile per call, a host sync), 0 when it does not, 2 when it cannot run here (it needs a GPU). Without CUDA the kernels
run under Triton's interpreter (TRITON_INTERPRET=1 is set here then, with the audit worker's untimed autotuner, the
first pruned config, and its bf16 dots that multiply values).

  python benchmarks/held_out.py 35_38 examples          # every file's harness example against its reference
  python benchmarks/held_out.py 35_38 examples_a        # ... of held_out_35/36 only (examples_b: 37/38)
  python benchmarks/held_out.py 35_38 rope_pairs        # apply_rope: the odd element of each pair (P0)
  python benchmarks/held_out.py 35_38 rope_gqa          # apply_rope: k with fewer heads than q (P0)
  python benchmarks/held_out.py 35_38 rope_positions    # apply_rope: per-batch position_ids cos/sin (P0)
  python benchmarks/held_out.py 35_38 rope_headdim      # apply_rope: head_dim 96 / 80 (a robustness note)
  python benchmarks/held_out.py 35_38 gemm_dtype        # int8_gemm: bf16 / fp32 activations (P0)
  python benchmarks/held_out.py 35_38 gemm_autotune_m   # int8_gemm: autotune per token count (a note; GPU)
  python benchmarks/held_out.py 35_38 permute_experts   # permute: E not a power of two, E left out (P0)
  python benchmarks/held_out.py 35_38 permute_recompile # permute: a compile per token count (P1)
  python benchmarks/held_out.py 35_38 permute_order     # permute + grouped_gemm: atomic slot order (P1; GPU)
  python benchmarks/held_out.py 35_38 gmm_offsets_ends  # grouped_gemm: offsets as [E] group ends (P0)
  python benchmarks/held_out.py 35_38 unpermute_max_tokens  # unpermute: max_tokens > num_tokens (a note)
  python benchmarks/held_out.py 35_38 scaler_repeat     # flashlib scaler: float64 atomics (a note; GPU)
  python benchmarks/held_out.py 35_38 fk_sink           # flash_decode_gqa_varlen: attention sinks (P0)
  python benchmarks/held_out.py 35_38 fk_varlen_sync    # flash_decode_gqa_varlen: a host sync per call (P1)
  python benchmarks/held_out.py 35_38 fk_split_buffers  # hf decode: split buffers reused across configs (P0)
  python benchmarks/held_out.py 35_38 fk_sliding_window # hf decode: sliding-window cache lengths (P0)
  python benchmarks/held_out.py 35_38 fk_paged_compile  # paged_flash_decode: `break` does not compile (P0)

On a GPU: PART=held_out HELD_OUT=35_38 bash benchmarks/gpu_session.sh (each check in its own process).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import torch

CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ["TRITON_INTERPRET"] = "1"
ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "audit_public_corpus"
HARNESSES = ROOT / "tests" / "audit_public_harnesses"
DEV = "cuda" if CUDA else "cpu"
sys.path.insert(0, str(ROOT / "server"))
_LOADED: dict[tuple[str, str], tuple] = {}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _pair(project: str, name: str):
    """(harness, corpus module), each loaded once: the harness first, so that its stand-ins are in place when the file
    imports. A file whose package stand-in already loaded it (moe_ops.unpermute_ops through permute) is that module."""
    if (project, name) in _LOADED:
        return _LOADED[project, name]
    if not CUDA:  # as the audit's worker does under the interpreter
        from pytorch_to_triton.worker.device import interp_autotune, interp_compat, interp_tf32
        interp_autotune.install()
        interp_compat.install()
        interp_tf32.install()  # bf16 dots multiply values, not bit patterns (Triton 3.9's interpreter)
    h = _load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    k = sys.modules.get(f"{project}.{name}") or _load(CORPUS / project / f"{name}.py", f"{project}.{name}")
    _LOADED[project, name] = (h, k)
    return h, k


class _Case:
    """The harnesses' `case` (shape, device, randn, rand, randint), as the validator's tasks.Case makes values: a seeded
    CPU generator, values moved to the device (kept here so that the GPU machine needs no server package)."""

    def __init__(self, shape, seed: int = 0) -> None:
        self.shape, self.device, self.scale = shape, DEV, 1.0
        self._gen = torch.Generator().manual_seed(seed)

    def randn(self, *shape, dtype=torch.float32):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if not dtype.is_floating_point:
            return self.randint(-64, 64, shape, dtype=dtype)
        return torch.randn(shape, generator=self._gen).to(DEV, dtype)

    def rand(self, *shape, low=0.0, high=1.0, dtype=torch.float32):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return (low + (high - low) * torch.rand(shape, generator=self._gen)).to(DEV, dtype)

    def randint(self, low, high, shape, dtype=torch.int64):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return torch.randint(low, high, shape, generator=self._gen).to(DEV, dtype)


def _case(shape, seed: int = 0) -> _Case:
    return _Case(shape, seed)


def _err(out, ref) -> tuple[float, float]:
    """Largest absolute difference over (nested) outputs, and the largest |ref|; NaN if shapes differ."""
    if isinstance(ref, (tuple, list)):
        pairs = [_err(o, r) for o, r in zip(out, ref, strict=True)]
        return max(p[0] for p in pairs), max(p[1] for p in pairs)
    if out.shape != ref.shape:
        return float("nan"), float(ref.double().abs().max())
    return float((out.double() - ref.double()).abs().max()), float(ref.double().abs().max())


def _report(name: str, rows: list[tuple[str, float, float]], limit: float) -> int:
    """Print `name: label err=.. (ref ..) ok|WRONG` per row; 1 if any row is over `limit`."""
    bad = False
    for label, err, scale in rows:
        wrong = not err <= limit  # NaN counts as wrong
        bad |= wrong
        print(f"{name}: {label} max abs err {err:.3e} (|ref| up to {scale:.3g}) {'WRONG' if wrong else 'ok'}")
    return 1 if bad else 0


def _guarded_empty_like(shape, extra_rows: int, fill: float = 7.0):
    """torch.empty_like stand-in for one call: a tensor of `shape` answered as the start of a larger buffer (the rows
    past it a guard filled with `fill`), so an out-of-bounds store lands in memory we own and shows."""
    real = torch.empty_like
    guards = []

    def _guarded(x, *a, **kw):
        if tuple(x.shape) != tuple(shape):
            return real(x, *a, **kw)
        buf = torch.full((x.numel() + extra_rows,), fill, dtype=kw.get("dtype") or x.dtype, device=x.device)
        guards.append((buf, x.numel()))
        return buf[: x.numel()].view(x.shape)

    return real, _guarded, guards


# ---------------------------------------------------------------- the harness examples of all four sets

# (project, file, set): every labelled file; the ones whose example shows a known problem are run by that problem's
# subcommand instead (EXAMPLE_SHOWS)
FILES = (("rotalabs_accel", "normalization", "held_out_35"), ("rotalabs_accel", "activations", "held_out_35"),
         ("rotalabs_accel", "rope", "held_out_35"), ("rotalabs_accel", "gemm", "held_out_35"),
         ("moe_ops", "fused_topk_softmax_ops", "held_out_36"), ("moe_ops", "permute_ops", "held_out_36"),
         ("moe_ops", "unpermute_ops", "held_out_36"), ("moe_ops", "grouped_gemm_ops", "held_out_36"),
         ("flashlib", "norm", "held_out_37"), ("flashlib", "scaler", "held_out_37"),
         ("flashlib", "gram_gemm", "held_out_37"), ("torch_fps", "_triton", "held_out_37"),
         ("fasterkernels", "triton_fa2", "held_out_38"), ("fasterkernels", "triton_gqa_decode", "held_out_38"),
         ("fasterkernels", "triton_gqa_decode_hf", "held_out_38"), ("fasterkernels", "triton_paged_attn", "held_out_38"),
         ("fused_turboquant", "triton_attention", "held_out_38"))
EXAMPLE_SHOWS = {("rotalabs_accel", "rope"): "rope_pairs"}
if CUDA:  # the interpreter runs Python's break; a GPU compile refuses it
    EXAMPLE_SHOWS[("fasterkernels", "triton_paged_attn")] = "fk_paged_compile"


def _example(project: str, name: str) -> tuple[str, float, float, float]:
    h, k = _pair(project, name)
    shape = getattr(h, "AUDIT_SHAPE", None) or getattr(h, "SHAPES", None)
    args = h.make_inputs(_case(shape))
    out = getattr(k, h.ENTRY)(*args)
    ref = h.reference(*args)
    first = ref[0] if isinstance(ref, (tuple, list)) else ref
    atol, rtol = getattr(h, "TOLERANCES", {}).get(str(first.dtype).removeprefix("torch."), (1e-5, 1e-5))
    err, scale = _err(out, ref)
    return f"{project}/{name}.py {h.ENTRY}{tuple(shape)}", err, scale, atol + rtol * scale


def examples(sets: tuple[str, ...] = ()) -> int:
    """Every labelled file's entry on its harness's example call, against the harness's reference (within the
    harness's tolerance). Files whose example shows a known problem are listed with the subcommand that shows it."""
    bad = False
    for project, name, s in FILES:
        if sets and s not in sets:
            continue
        if (project, name) in EXAMPLE_SHOWS:
            print(f"examples: {project}/{name}.py: its example shows a known problem: see {EXAMPLE_SHOWS[project, name]}")
            continue
        label, err, scale, limit = _example(project, name)
        wrong = not err <= limit
        bad |= wrong
        print(f"examples: {label} max abs err {err:.3e} (|ref| up to {scale:.3g}, limit {limit:.2g}) "
              f"{'WRONG' if wrong else 'ok'}", flush=True)
    return 1 if bad else 0


def examples_a() -> int:
    """examples of held_out_35 and held_out_36 only."""
    return examples(("held_out_35", "held_out_36"))


def examples_b() -> int:
    """examples of held_out_37 and held_out_38 only."""
    return examples(("held_out_37", "held_out_38"))


# ---------------------------------------------------------------- rotalabs-accel (held_out_35)


def rope_pairs() -> int:
    """apply_rope at the harness's example (RotaryEmbedding's call: [1, 16, 4, 128] fp16, the module's cos/sin cache):
    the kernel's odd element of each pair is q[2i] * cos + q[2i + 1] * sin where the formula (its docstring, its own
    rope_torch) is q[2i] * sin + q[2i + 1] * cos. Position 0 (cos 1, sin 0) alone: the odd element comes out as
    q[2i]."""
    h, k = _pair("rotalabs_accel", "rope")
    args = h.make_inputs(_case(h.AUDIT_SHAPE))
    q_out, k_out = k.apply_rope(*args)
    q_ref, k_ref = h.reference(*args)
    rows = [("q, example", *_err(q_out, q_ref)), ("k, example", *_err(k_out, k_ref)),
            ("q at position 0, even elements", *_err(q_out[:, 0, :, 0::2], q_ref[:, 0, :, 0::2])),
            ("q at position 0, odd elements", *_err(q_out[:, 0, :, 1::2], q_ref[:, 0, :, 1::2]))]
    return _report("rope_pairs", rows, 1e-2)


def rope_gqa() -> int:
    """Grouped-query attention (Llama-2-70B, Llama-3, Mistral: fewer key heads than query heads): the grid's second
    axis is q's head count and the kernel loads and stores k at every one of them, so k heads past k's own are read
    past k and written past k_out (torch.empty_like(k)). k_out is given a guard region here: exit 1 when the guard
    changes. The harness's head_dim 128, 8 query heads and 2 key heads."""
    h, k = _pair("rotalabs_accel", "rope")
    b, s, hq, hk, d = 1, 4, 8, 2, 128
    g = torch.Generator().manual_seed(1)
    q = torch.randn(b, s, hq, d, generator=g).to(DEV, torch.float16)
    kk = torch.randn(b, s, hk, d, generator=g).to(DEV, torch.float16)
    kbuf = torch.zeros(b * s * hq * d, dtype=torch.float16, device=DEV)  # reads past k stay in memory we own
    kbuf[: kk.numel()] = kk.reshape(-1)
    kin = kbuf[: kk.numel()].view(b, s, hk, d)
    cos, sin = h._cache(s, d, DEV)
    real, guarded, guards = _guarded_empty_like(kin.shape, b * s * hq * d)
    torch.empty_like = guarded
    try:
        q_out, k_out = k.apply_rope(q, kin, cos, sin)
    finally:
        torch.empty_like = real
    if CUDA:
        torch.cuda.synchronize()
    buf, n = guards[0]
    written = int((buf[n:] != 7.0).sum())
    q_ref, k_ref = h.reference(q, kk, cos, sin)
    print(f"rope_gqa: 8 query heads, 2 key heads: {written} elements written past k_out's {n}; "
          f"{'WRONG' if written else 'ok'}")
    return 1 if written else 0


def rope_positions() -> int:
    """RotaryEmbedding.forward(q, k, position_ids) (documented: position_ids [batch, seq]) hands apply_rope cos =
    cos_cache[position_ids], [batch, seq, head_dim / 2]; _rope_triton squeezes dims 0 and 1 (no-ops for batch > 1 and
    seq > 1), slices the batch axis to seq and indexes it with seq_idx * stride(0): batch b's table is read for position
    seq_idx (past the table for seq_idx >= batch). Two sequences at positions 0..7 and 5..12 (a batched decode cache
    offset), head_dim 64. Judged against the kernel itself (so that rope_pairs' problem does not count here): each
    sequence alone (batch 1, where the squeeze gives its own [seq, d / 2] table) must give the same rows."""
    _, k = _pair("rotalabs_accel", "rope")
    h = sys.modules["h_rotalabs_accel_rope"]
    g = torch.Generator().manual_seed(2)
    b, s, hh, d = 2, 8, 2, 64
    q = torch.randn(b, s, hh, d, generator=g).to(DEV, torch.float16)
    kk = torch.randn(b, s, hh, d, generator=g).to(DEV, torch.float16)
    cos_c, sin_c = h._cache(64, d, DEV)
    pos = torch.stack([torch.arange(s) + 5 * i for i in range(b)]).to(DEV)
    # the table padded past its end with NaN, so reads past the [2, 8, 32] gather show as NaN, not as other memory
    cos_b = torch.full((b * s * 4, d // 2), float("nan"), device=DEV)
    sin_b = cos_b.clone()
    cos_b[: b * s], sin_b[: b * s] = cos_c[pos].reshape(b * s, -1), sin_c[pos].reshape(b * s, -1)
    cos_b, sin_b = cos_b[: b * s].view(b, s, -1), sin_b[: b * s].view(b, s, -1)
    q_out, _ = k.apply_rope(q, kk, cos_b, sin_b)
    rows = []
    for i in range(b):
        q_one, _ = k.apply_rope(q[i:i + 1], kk[i:i + 1], cos_b[i:i + 1], sin_b[i:i + 1])
        rows.append((f"sequence {i} of 2 (positions {5 * i}..{5 * i + s - 1}) vs alone", *_err(q_out[i:i + 1], q_one)))
    return _report("rope_positions", rows, 1e-2)


def rope_headdim() -> int:
    """A robustness note: BLOCK_SIZE = min(128, head_dim) is a tl.arange length, so a head_dim that is not a power of
    two (Phi-3-mini's 96, Phi-2's 80) fails to compile; the package names Llama, Mistral and Qwen (128)."""
    h, k = _pair("rotalabs_accel", "rope")
    bad = False
    for d in (64, 96, 80):
        q = torch.randn(1, 4, 2, d).to(DEV, torch.float16)
        cos, sin = h._cache(4, d, DEV)
        try:
            k.apply_rope(q, q.clone(), cos, sin)
            print(f"rope_headdim: head_dim {d}: ran")
        except Exception as e:  # noqa: BLE001 - the compile error is what this shows
            bad |= True
            print(f"rope_headdim: head_dim {d}: {type(e).__name__}: {str(e).splitlines()[0][:120]} WRONG")
    return 1 if bad else 0


def gemm_dtype() -> int:
    """int8_gemm's kernel dots the activation tile in x's dtype with the weight tile converted to fp16: a bf16 x
    (a bf16 model's Int8Linear: W8A16's other 16-bit activation) or a float32 x (Int8Linear's own docstring example
    feeds torch.randn, float32) fails to compile ("Both operands must be same dtype"). fp16 is the control."""
    h, k = _pair("rotalabs_accel", "gemm")
    rows = []
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        args = list(h.make_inputs(_case((1, 6, 256, 128))))
        args[0] = args[0].to(dt)
        try:
            out = k.int8_gemm(*args)
            rows.append((f"x {str(dt)[6:]}", *_err(out, h.reference(*args))))
        except Exception as e:  # noqa: BLE001
            print(f"gemm_dtype: x {str(dt)[6:]}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            rows.append((f"x {str(dt)[6:]} (raised)", float("nan"), 0.0))
    return _report("gemm_dtype", rows, 5e-2)


def gemm_autotune_m() -> int:
    """int8_gemm's autotuner is keyed on M (batch * seq) as well as N and K: every new token count benchmarks all 8
    configs again (a serving step's M changes with the batch and each prompt's length). GPU only (the interpreter's
    autotuner is untimed): 6 token counts through one layer; exit 1 if the autotuner keeps an entry per M."""
    if not CUDA:
        print("gemm_autotune_m: needs a GPU (the interpreter's autotuner does not benchmark)")
        return 2
    import time

    h, k = _pair("rotalabs_accel", "gemm")
    args = list(h.make_inputs(_case((1, 1, 2048, 2048))))
    times = []
    for m in (1, 7, 33, 100, 257, 513):
        args[0] = torch.randn(1, m, 2048, device=DEV, dtype=torch.float16)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        k.int8_gemm(*args)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        k.int8_gemm(*args)
        torch.cuda.synchronize()
        times.append((m, t1 - t0, time.perf_counter() - t1))
    entries = len(k._int8_gemm_kernel.cache)
    for m, first, second in times:
        print(f"gemm_autotune_m: M {m}: first call {first * 1e3:.1f} ms, second {second * 1e3:.2f} ms")
    print(f"gemm_autotune_m: autotuner cache entries after 6 token counts: {entries} {'WRONG' if entries >= 6 else 'ok'}")
    return 1 if entries >= 6 else 0


# ---------------------------------------------------------------- moe-ops (held_out_36)


def permute_experts() -> int:
    """permute's histogram kernel takes E as the bin count of tl.histogram and builds tl.arange(0, E): E must be a
    power of two. E = 60 (Qwen1.5-MoE-A2.7B's routed experts; 40 for granite-3.0-3b-a800m, 160 for DeepSeek-V2) fails
    to compile; with E left out (the package's own MoE layer, tests/test_correctness.py, calls permute(x, indices))
    E = indices.max() + 1 comes from the batch: a decode step whose token is routed to experts 2 and 5 of Mixtral's 8
    gets E = 6 (no compile), and one routed only to experts 0-3 gets E = 4, offsets of 5 entries, which grouped_gemm
    (grid = the layer's 8 experts) reads past. E = 8 given is the control."""
    _, k = _pair("moe_ops", "permute_ops")
    g = torch.Generator().manual_seed(3)
    bad = False
    cases = (("E=8 given, 32 tokens", 32, None, 8), ("E=60 given (Qwen1.5-MoE), 32 tokens", 32, None, 60),
             ("E left out, 1 token routed to experts 2 and 5", 1, [[2, 5]], None),
             ("E left out, 2 tokens routed to experts 0-3 of 8", 2, [[0, 1], [2, 3]], None))
    for label, t, routes, e in cases:
        x = torch.randn(t, 64, generator=g).to(DEV, torch.bfloat16)
        if routes is None:
            idx = torch.rand(t, e, generator=g).argsort(dim=-1)[:, :2]
        else:
            idx = torch.tensor(routes)
        idx = idx.to(DEV, torch.int32)
        try:
            _, _, offsets = k.permute(x, idx, 0, e)
            short = offsets.numel() < 9 and e is None
            bad |= short
            print(f"permute_experts: {label}: offsets has {offsets.numel()} entries"
                  f"{' for a layer of 8 experts: grouped_gemm reads past it WRONG' if short else ' ok'}")
        except Exception as ex:  # noqa: BLE001 - the compile error is what this shows
            bad = True
            print(f"permute_experts: {label}: {type(ex).__name__}: {str(ex).splitlines()[0][:120]} WRONG")
    return 1 if bad else 0


def permute_recompile() -> int:
    """_group_offsets_kernel declares num_total (= tokens * K) a tl.constexpr: every new token count is a new compile
    (a serving step's batch, or training with dynamic padding). On a GPU: the compiled variants after 6 token counts
    (exit 1 if one per count). Under the interpreter (no compile cache) the declaration is read from the kernel's
    signature: exit 1 while num_total is a constexpr."""
    _, k = _pair("moe_ops", "permute_ops")
    kern = k._group_offsets_kernel
    if not CUDA:
        import inspect

        sig = inspect.signature(getattr(kern, "fn", kern))
        const = [n for n, prm in sig.parameters.items() if "constexpr" in str(prm.annotation)]
        print(f"permute_recompile: constexpr parameters of _group_offsets_kernel: {const} (read; GPU counts compiles) "
              f"{'WRONG' if 'num_total' in const else 'ok'}")
        return 1 if "num_total" in const else 0
    g = torch.Generator().manual_seed(4)
    for t in (1, 3, 8, 17, 64, 100):
        x = torch.randn(t, 64, generator=g).to(DEV, torch.bfloat16)
        idx = torch.rand(t, 8, generator=g).argsort(dim=-1)[:, :2].to(DEV, torch.int32)
        k.permute(x, idx, 0, 8)
    torch.cuda.synchronize()
    n = sum(len(c[0]) for c in kern.device_caches.values())
    print(f"permute_recompile: compiled variants of _group_offsets_kernel after 6 token counts: {n} "
          f"{'WRONG' if n >= 6 else 'ok'}")
    return 1 if n >= 6 else 0


def permute_order() -> int:
    """permute hands each expert's slots out with tl.atomic_add on a counter (one program per (token, k)), so on a GPU
    the rows of one expert land in arrival order: permuted and row_id_map differ from run to run, and grouped_gemm's
    weight gradient (gmm_gradB, a sum over each expert's rows in that order) differs in the last bits, so the MoE
    layer's training step is not bitwise reproducible. GPU only (the interpreter runs programs in order): 4096 tokens,
    top-2 of 8 experts, d_model 1024, hidden 1024, bf16; three runs compared bit for bit; exit 1 if they differ."""
    if not CUDA:
        print("permute_order: needs a GPU (the interpreter runs programs in order)")
        return 2
    _, kp = _pair("moe_ops", "permute_ops")
    _, kg = _pair("moe_ops", "grouped_gemm_ops")
    g = torch.Generator().manual_seed(5)
    t, d, n, e = 4096, 1024, 1024, 8
    x = torch.randn(t, d, generator=g).to(DEV, torch.bfloat16)
    idx = torch.rand(t, e, generator=g).argsort(dim=-1)[:, :2].to(DEV, torch.int32)
    w = (torch.randn(e, n, d, generator=g) / 32).to(DEV, torch.bfloat16)
    gout = torch.randn(t * 2, n, generator=g).to(DEV, torch.bfloat16)
    maps, grads = [], []
    for _ in range(3):
        p, rmap, offs = kp.permute(x, idx, 0, e)
        ww = w.clone().requires_grad_()
        c = kg.grouped_gemm(p, ww, offs)
        c.backward(gout)
        maps.append(rmap.clone())
        grads.append(ww.grad.clone())
    same_map = all(torch.equal(maps[0], m) for m in maps[1:])
    same_grad = all(torch.equal(grads[0], x_) for x_ in grads[1:])
    print(f"permute_order: row_id_map equal over 3 runs: {same_map}; grouped_gemm weight gradient bitwise equal: "
          f"{same_grad} {'WRONG' if not same_grad else 'ok'}")
    return 0 if same_grad else 1


def gmm_offsets_ends() -> int:
    """The package's __init__ documents offsets as "[E] cumulative group ends (offsets[e] = end row of expert e)" and
    the sm90 wrapper accepts [E] or [E + 1]; gmm_forward_kernel (the sm80 path, also the sm90 wrapper's fallback) reads
    offsets[g] and offsets[g + 1] as expert g's start and end: given the [E] ends, expert 0 starts at its own end,
    every expert takes the next one's rows, and the last reads offsets[E], past the tensor. The [E + 1] offsets
    permute returns are the control."""
    h, k = _pair("moe_ops", "grouped_gemm_ops")
    a, b, offsets = h.make_inputs(_case(h.AUDIT_SHAPE))
    ref = h.reference(a, b, offsets)
    # the read of offsets[E] past the [E] tensor lands on a guard holding the last end (the rows' count), so the last
    # expert is empty there and no store leaves C; any other value there moves that expert's rows past C
    guard = torch.full((offsets.numel() + 8,), int(offsets[-1]), dtype=torch.int32, device=DEV)
    guard[: offsets.numel() - 1] = offsets[1:]
    rows = [("offsets [E + 1] (permute's)", *_err(k.grouped_gemm(a, b, offsets), ref))]
    out = k.grouped_gemm(a, b, guard[: offsets.numel() - 1])
    rows.append(("offsets [E] ends (the __init__'s layout)", *_err(out, ref)))
    return _report("gmm_offsets_ends", rows, 0.1)


def unpermute_max_tokens() -> int:
    """A robustness note: unpermute(..., max_tokens) launches max_tokens programs and passes max_tokens as the kernel's
    num_tokens, so row_id_map is indexed k * max_tokens + t (permute wrote k * num_tokens + t) and rows t >= num_tokens
    read prob past its end: with max_tokens > num_tokens every k >= 1 slot is wrong. No caller in the package passes
    max_tokens. The default (-1) is the control."""
    h, k = _pair("moe_ops", "unpermute_ops")
    inp, rmap, prob, t, kk = h.make_inputs(_case(h.AUDIT_SHAPE))
    ref = h.reference(inp, rmap, prob, t, kk)
    pbuf = torch.zeros(2 * t, kk, dtype=prob.dtype, device=DEV)  # reads of prob past row t stay in memory we own
    pbuf[:t] = prob
    mbuf = torch.zeros(2 * rmap.numel() + 16, dtype=rmap.dtype, device=DEV)  # and so do reads of row_id_map (row 0)
    mbuf[: rmap.numel()] = rmap
    rows = [("max_tokens default", *_err(k.unpermute(inp, mbuf[: rmap.numel()], pbuf[:t], t, kk), ref))]
    out = k.unpermute(inp, mbuf[: rmap.numel()], pbuf[:t], t, kk, t + 8)
    rows.append((f"max_tokens {t + 8} (first {t} rows)", *_err(out[:t], ref)))
    return _report("unpermute_max_tokens", rows, 5e-2)


# ---------------------------------------------------------------- flashlib, torch-fps (held_out_37)


def scaler_repeat() -> int:
    """A labelling note, GPU only: flash_standard_scaler_fit adds each block's column sums into float64 totals with
    tl.atomic_add (arrival order). Are the float32 mean and std bitwise the same over 5 runs at 1,000,000 x 64 (the
    float64 order differences rarely reach float32's last bit)? exit 1 if they differ (then a float-atomic P1 on
    the scaler is real), 0 if not (a finding is paper-only)."""
    if not CUDA:
        print("scaler_repeat: needs a GPU (the interpreter runs programs in order)")
        return 2
    _, k = _pair("flashlib", "scaler")
    x = 100.0 + 5.0 * torch.randn(1_000_000, 64, generator=torch.Generator().manual_seed(8)).to(DEV)
    runs = [k.flash_standard_scaler_fit(x)[:2] for _ in range(5)]
    same = all(torch.equal(runs[0][0], r[0]) and torch.equal(runs[0][1], r[1]) for r in runs[1:])
    print(f"scaler_repeat: float32 mean and std bitwise equal over 5 runs: {same} {'ok' if same else 'WRONG'}")
    return 0 if same else 1


# ---------------------------------------------------------------- fasterkernels, fused-turboquant (held_out_38)


def fk_sink() -> int:
    """flash_decode_gqa_varlen(..., s_aux): the attention-sink logits (GPT-OSS) are added to the softmax denominator
    as raw logits (l_i += s_aux) where a sink adds exp(s_aux - max) (the package's own reference, tilelang_gqa_decode's
    ref_attention). The harness's example with per-head sinks drawn like logits (N(0, 1)); without sinks is the
    control."""
    h, k = _pair("fasterkernels", "triton_gqa_decode")
    args = h.make_inputs(_case(h.AUDIT_SHAPE))
    sink = torch.randn(h.AUDIT_SHAPE[1], generator=torch.Generator().manual_seed(9)).to(DEV)
    rows = [("no sinks", *_err(k.flash_decode_gqa_varlen(*args), h.reference(*args))),
            ("per-head sinks", *_err(k.flash_decode_gqa_varlen(*args, sink), h.reference(*args, sink)))]
    return _report("fk_sink", rows, 1e-2)


def fk_varlen_sync() -> int:
    """flash_decode_gqa_varlen computes max_seqlen_kv = int((cu_seqlens_k[1:] - cu_seqlens_k[:-1]).max()) on every
    call: a device-to-host sync per decode step (and per layer), for a value the kernel never reads (MAX_SEQLEN_KV
    appears only in its signature). On a GPU: torch.cuda.set_sync_debug_mode("error") makes the sync raise (exit 1).
    Under the interpreter (no device): read, exit 1 while the kernel leaves MAX_SEQLEN_KV unread and the wrapper
    calls int() on a tensor reduction."""
    import inspect

    h, k = _pair("fasterkernels", "triton_gqa_decode")
    src = inspect.getsource(getattr(k._flash_decode_gqa_varlen_kernel, "fn", k._flash_decode_gqa_varlen_kernel))
    body = src.split(":", 1)[1].split("):", 1)[1]  # past the signature
    unread = "MAX_SEQLEN_KV" not in body
    wrapper = inspect.getsource(k.flash_decode_gqa_varlen)
    syncs = "int((cu_seqlens_k" in wrapper
    if not CUDA:
        print(f"fk_varlen_sync: MAX_SEQLEN_KV read by the kernel: {not unread}; the wrapper syncs for it: {syncs} "
              f"(read) {'WRONG' if unread and syncs else 'ok'}")
        return 1 if unread and syncs else 0
    args = h.make_inputs(_case(h.AUDIT_SHAPE))
    k.flash_decode_gqa_varlen(*args)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        k.flash_decode_gqa_varlen(*args)
        synced = False
    except RuntimeError as e:
        synced = "synchroniz" in str(e)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    print(f"fk_varlen_sync: the call synchronises the host: {synced}; MAX_SEQLEN_KV read by the kernel: {not unread} "
          f"{'WRONG' if synced else 'ok'}")
    return 1 if synced else 0


def fk_split_buffers() -> int:
    """flash_decode_gqa_hf_dense_optimized keeps its split-KV buffers in module globals, reallocated only when a call
    has a larger batch (`_GLOBAL_SPLIT_OUT.shape[0] < batch_size`): a later call with more splits (a second
    CUDAGraphRunner / engine with num_splits 16 after one with 8), other head counts or head_dim, or another dtype
    reuses the first call's buffers with its own split count and head counts: partial outputs and (l, m) rows are
    written past the buffers and across each other. Here the buffers a first call at num_splits 8 left are views at
    the start of guarded buffers; a second call at the same batch with num_splits 16: exit 1 when a guard changes or
    the output is wrong. num_splits 8 again is the control."""
    h, k = _pair("fasterkernels", "triton_gqa_decode_hf")
    b, hq, hk, s, d = h.AUDIT_SHAPE
    q, kc, vc, lens, _, _ = h.make_inputs(_case(h.AUDIT_SHAPE))
    ref = h.reference(q, kc, vc, lens)
    shapes = ((b, hk, 8, hq, d), (b, hq * 8), (b, hq * 8))
    fills = (0.0, 0.0, float("-inf"))
    guards = [torch.full((2 * torch.Size(sh).numel(),), 7.0, dtype=dt, device=DEV)
              for sh, dt in zip(shapes, (q.dtype, torch.float32, torch.float32), strict=True)]
    views = []
    for g, sh, f in zip(guards, shapes, fills, strict=True):
        n = torch.Size(sh).numel()
        g[:n] = f
        views.append(g[:n].view(sh))
    k._GLOBAL_SPLIT_OUT, k._GLOBAL_SPLIT_L, k._GLOBAL_SPLIT_M = views  # as a first call at num_splits 8 leaves them
    bad = False
    for ns in (8, 16):
        out = k.flash_decode_gqa_hf_dense_optimized(q, kc, vc, lens, None, ns)
        if CUDA:
            torch.cuda.synchronize()
        past = sum(int((g[torch.Size(sh).numel():] != 7.0).sum()) for g, sh in zip(guards, shapes, strict=True))
        err, scale = _err(out, ref)
        wrong = past > 0 or not err <= 1e-2
        bad |= wrong
        print(f"fk_split_buffers: num_splits {ns} into the 8-split buffers: {past} elements written past them; "
              f"max abs err {err:.3e} (|ref| up to {scale:.3g}) {'WRONG' if wrong else 'ok'}")
    k._GLOBAL_SPLIT_OUT = k._GLOBAL_SPLIT_L = k._GLOBAL_SPLIT_M = None
    return 1 if bad else 0


def fk_sliding_window() -> int:
    """custom_hf_decode_attention_forward (the HF attention the package patches in) passes a sliding-window layer
    cache_lens = clamp(len, max=window) with start offsets len - window, but the kernel reads positions
    [start, cache_lens) of the cache as absolute indices: with the package's own static cache (engine's
    CUDAGraphCache, [B, KV_H, max_len, D], token t at position t) a sequence longer than the window attends to
    positions [len - window, window) (none at len >= 2 * window: 0 / 0). Decode at len 200 with a 64-token window
    (Mistral-7B-v0.1's 4096, Gemma's 512-4096; cut), against attention over the last 64 positions; no window (full
    attention) is the control."""
    h, k = _pair("fasterkernels", "triton_gqa_decode_hf")
    b, hq, hk, s, d = 1, 8, 2, 256, 64
    g = torch.Generator().manual_seed(10)
    q = torch.randn(b, hq, 1, d, generator=g).to(DEV, torch.float16)
    kc = torch.randn(b, hk, s, d, generator=g).to(DEV, torch.float16)
    vc = torch.randn(b, hk, s, d, generator=g).to(DEV, torch.float16)
    n, window = 200, 64

    class _Attn(torch.nn.Module):
        num_key_value_heads = hk

    pos = torch.tensor([n - 1], device=DEV)
    rows = []
    for label, win, lo in (("full attention", None, 0), (f"sliding window {window}", window, n - window)):
        out, _ = k.custom_hf_decode_attention_forward(_Attn(), q, kc, vc, None, d ** -0.5, past_key_values=object(),
                                                      cache_position=pos, sliding_window=win)
        ref = h.reference(q[:, :, 0], kc, vc, torch.tensor([n], device=DEV), torch.tensor([lo], device=DEV))
        rows.append((label, *_err(out, ref)))
    return _report("fk_sliding_window", rows, 1e-2)


_PAGED_COMPILE = """
import importlib.util, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend
from triton.runtime.jit import JITFunction
spec = importlib.util.spec_from_file_location("paged", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
jf = m._paged_flash_decode_kernel
jf = jf if isinstance(jf, JITFunction) else JITFunction(jf.fn)
ptr = {"Q": "*bf16", "K_Pool": "*bf16", "V_Pool": "*bf16", "Block_Table": "*i32", "Seq_Lens": "*i32", "Out": "*bf16"}
const = {"PAGE_SIZE": 16, "BLOCK_H": 16, "HEAD_DIM": 128, "MAX_BLOCKS": 32}
target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
kwargs = dict(const, num_warps=4, num_stages=2)
spec_ = [("constexpr", const[p.name]) if p.name in const else (ptr.get(p.name, "i32"), "") for p in jf.params]
bound = {p.name: const.get(p.name) for p in jf.params}
opts, sig, consts, attrs = jf._pack_args(backend, kwargs, bound, spec_, backend.parse_options(kwargs))
try:
    triton.compile(ASTSource(jf, sig, consts, attrs), target=target, options=opts.__dict__)
    print("compiled")
except Exception as e:
    print("error: " + " | ".join(str(e).strip().splitlines()[-2:]))
"""


def fk_paged_compile() -> int:
    """_paged_flash_decode_kernel leaves its page loop with `break` (`if page_start >= seq_len: break`), which Triton's
    compiler refuses ("unsupported AST node type: Break"): paged_flash_decode fails to compile on every call on a GPU,
    while the interpreter runs Python's break and gives the right result (see examples). Under the interpreter the
    kernel is compiled for sm_90 in a child process without TRITON_INTERPRET (Triton's own frontend, no GPU needed);
    on a GPU the harness's example call is made. exit 1 when it does not compile."""
    import subprocess

    path = CORPUS / "fasterkernels" / "triton_paged_attn.py"
    if not CUDA:
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        r = subprocess.run([sys.executable, "-c", _PAGED_COMPILE, str(path)], capture_output=True, text=True,
                           env=env, timeout=300)
        line = (r.stdout.strip().splitlines() or [r.stderr.strip()[-200:]])[-1]
        bad = not line.startswith("compiled")
        print(f"fk_paged_compile: sm_90 compile of _paged_flash_decode_kernel: {line[:200]} {'WRONG' if bad else 'ok'}")
        return 1 if bad else 0
    h, k = _pair("fasterkernels", "triton_paged_attn")
    args = h.make_inputs(_case(h.AUDIT_SHAPE))
    try:
        out = k.paged_flash_decode(*args)
        err, scale = _err(out, h.reference(*args))
        print(f"fk_paged_compile: compiled and ran: max abs err {err:.3e} ok")
        return 0
    except Exception as e:  # noqa: BLE001 - the compile error is what this shows
        print(f"fk_paged_compile: {type(e).__name__}: {str(e).strip().splitlines()[-1][:200]} WRONG")
        return 1


def _commands() -> dict:
    """The subcommands: this module's public functions, in the order they are defined."""
    me = sys.modules[__name__]
    return {n: f for n, f in vars(me).items() if callable(f) and not n.startswith("_") and n != "main"
            and getattr(f, "__module__", None) == __name__ and n.islower()}


def main(names: list[str]) -> int:
    """Run each named check in this process (imports and compiles are paid once); with several, print
    `rc NAME=N` after each and exit with the first nonzero code. A check that raises counts as showing its problem (1)."""
    commands = _commands()
    if not names or any(n not in commands for n in names):
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(commands)}}} [...]")
    codes = []
    for n in names:
        try:
            codes.append(commands[n]())
        except Exception as e:  # a crash (a compile error, an illegal address) is the problem showing: named, rc 1
            print(f"{n}: CRASH {type(e).__name__}: {str(e).splitlines()[0][:240] if str(e) else ''}", flush=True)
            codes.append(1)
        if len(names) > 1:
            print(f"rc {n}={codes[-1]}", flush=True)
    return next((c for c in codes if c), 0)


from _common import Check  # noqa: E402 - the runner puts this folder on sys.path

GPU_RUN = None
CHECKS = {  # what a GPU run gives when the labels are right (the held_out_35..38 sections of the corpus README)
    "examples_a": Check(examples_a, "0: every held_out_35/36 harness example right (rope excepted: rope_pairs)", 120),
    "rope_pairs": Check(rope_pairs, "1: the odd element of each pair wrong (P0)", 60),
    "rope_gqa": Check(rope_gqa, "1: elements written past k_out with fewer key heads (P0)", 60),
    "rope_positions": Check(rope_positions, "1: per-batch position_ids' cos/sin misread (P0)", 60),
    "rope_headdim": Check(rope_headdim, "1 (a note: head_dim 96 and 80 raise)", 60),
    "gemm_dtype": Check(gemm_dtype, "1: bf16 and float32 activations fail to compile (P0)", 90),
    "gemm_autotune_m": Check(gemm_autotune_m, "a labelling note: 1 while the autotuner keeps an entry per token count "
                             "(its table: first- and second-call times)", 120),
    "permute_experts": Check(permute_experts, "1: E not a power of two, experts left out (P0)", 60),
    "permute_recompile": Check(permute_recompile, "1: one compiled variant per token count (0: the P1 is paper-only)",
                               120),
    "permute_order": Check(permute_order, "1: grouped_gemm's weight gradient differs run to run (0: the P1 is "
                           "paper-only)", 120),
    "gmm_offsets_ends": Check(gmm_offsets_ends, "1: offsets given as [E] group ends (P0)", 60),
    "unpermute_max_tokens": Check(unpermute_max_tokens, "1 (a note: max_tokens > num_tokens)", 60),
    "examples_b": Check(examples_b, "0: every held_out_37/38 example right (paged_flash_decode excepted)", 120),
    "fk_sink": Check(fk_sink, "1: attention sinks ignored (P0)", 60),
    "fk_varlen_sync": Check(fk_varlen_sync, "1: the call syncs the host (P1)", 60),
    "fk_split_buffers": Check(fk_split_buffers, "1: elements written past the 8-split buffers (P0)", 60),
    "fk_sliding_window": Check(fk_sliding_window, "1: NaN with sliding-window cache lengths (P0)", 60),
    "fk_paged_compile": Check(fk_paged_compile, "1: the example call fails to compile (break) (P0)", 120),
    "scaler_repeat": Check(scaler_repeat, "a labelling note: 1 = the float64 atomics change the float32 statistics run "
                           "to run (a float-atomic P1 on scaler.py is real); 0 = paper-only", 60),
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
