"""Issue 20: kernel and host-time variants of the swiglu, geglu and rope gallery stage 3, side by side (H200).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/explore_glu_rope.py

For each op at its bench shape (forward under no_grad, then forward+backward) and at vs_liger.py's sweep shapes
(forward): stage 3 as it stands, stage 3 at HEAD (when git can show it), torch.compile (dynamic=False: one compile per
shape, the stricter bar), Liger-Kernel and eager, plus kernel variants launched straight from stage 3's kernels
(flat BLOCK / num_warps for the GLUs, (BLOCK_H, tile, num_warps) for rope) or defined here (eviction hints, a
persistent grid, tanh.approx / libdevice tanh GELU). Every variant's output (and gradients for fwd+bwd) is checked
against the fp32 reference first (vs_liger.py's bf16 rule); a mismatch is reported and not timed. Timing:
triton.testing.do_bench(warmup=25, rep=100, median); host ms: 20 back-to-back calls between two syncs (as
vs_liger.py's _host_ms, with no_grad and input rotation). Writes $OUT/explore_glu_rope.json; prints a compact table
last. Stops starting new points after EXPLORE_BUDGET_S (default 170 s).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
import triton.testing

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")
BUDGET_S = float(os.environ.get("EXPLORE_BUDGET_S", "170"))
T0 = time.perf_counter()
DT = torch.bfloat16
RES: dict = {"points": [], "notes": []}

try:
    import liger_kernel.transformers.functional as LF  # noqa: N812
except Exception as e:  # noqa: BLE001 - optional comparison
    LF = None
    RES["notes"].append(f"liger not importable: {type(e).__name__}: {e}")
try:
    from triton.language.extra import libdevice
except Exception:  # noqa: BLE001
    libdevice = None


def _left() -> float:
    return BUDGET_S - (time.perf_counter() - T0)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load_head(rel: str, name: str):
    """The file as committed at HEAD (the numbers in RESULTS.md), or None when git cannot show it."""
    try:
        src = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=ROOT, capture_output=True, text=True, timeout=20,
                             check=True).stdout
        f = Path(tempfile.mkdtemp()) / f"{name}.py"
        f.write_text(src)
        return _load(f, name)
    except Exception as e:  # noqa: BLE001
        RES["notes"].append(f"HEAD {rel} unavailable: {type(e).__name__}")
        return None


# ---------------------------------------------------------------------------------------------- variant kernels
@triton.jit
def _glu_act(a, b, GELU: tl.constexpr):
    if GELU:
        y = a * tl.sigmoid(a * (1.5957691216057308 + 0.0713548162726 * a * a)) * b
    else:
        y = a * tl.sigmoid(a) * b
    return y


@triton.jit
def glu_evict_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr, GELU: tl.constexpr):
    """Flat, unmasked (BLOCK divides n), streaming hints: loads evict_first, store .cs."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, eviction_policy="evict_first").to(tl.float32)
    b = tl.load(b_ptr + offs, eviction_policy="evict_first").to(tl.float32)
    tl.store(c_ptr + offs, _glu_act(a, b, GELU).to(c_ptr.dtype.element_ty), cache_modifier=".cs")


@triton.jit
def glu_persistent_kernel(a_ptr, b_ptr, c_ptr, n_tiles, BLOCK: tl.constexpr, GELU: tl.constexpr):
    """Flat, unmasked, a grid of a few programs per SM walking the tiles."""
    for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + offs).to(tl.float32)
        b = tl.load(b_ptr + offs).to(tl.float32)
        tl.store(c_ptr + offs, _glu_act(a, b, GELU).to(c_ptr.dtype.element_ty))


@triton.jit
def geglu_tanh_approx_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    """0.5 a (1 + tanh(u)) * b with the hardware tanh.approx.f32 (one MUFU op)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs).to(tl.float32)
    b = tl.load(b_ptr + offs).to(tl.float32)
    u = a * (0.7978845608028654 + 0.0356774081363 * a * a)
    t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [u], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(c_ptr + offs, (0.5 * a * (1.0 + t) * b).to(c_ptr.dtype.element_ty))


if libdevice is not None:
    @triton.jit
    def geglu_libdevice_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
        """0.5 a (1 + tanh(u)) * b with libdevice's tanh (what inductor emits)."""
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + offs).to(tl.float32)
        b = tl.load(b_ptr + offs).to(tl.float32)
        t = libdevice.tanh(a * (0.7978845608028654 + 0.0356774081363 * a * a))
        tl.store(c_ptr + offs, (0.5 * a * (1.0 + t) * b).to(c_ptr.dtype.element_ty))


# ---------------------------------------------------------------------------------------------- timing and checks
def _bench(fn) -> float:
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _host_ms(fn, calls: int = 20) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - t0) / calls * 1e3
    torch.cuda.synchronize()
    return host


def _close(outs, refs) -> tuple[bool, float]:
    """vs_liger.py's rule (bf16 relative error plus 1e-4 of the largest value); also max |o - r| / max |r|."""
    outs = [outs] if isinstance(outs, torch.Tensor) else list(outs)
    refs = [refs] if isinstance(refs, torch.Tensor) else list(refs)
    worst, rel = 0.0, 0.0
    for o, r in zip(outs, refs, strict=True):
        o, r = o.float(), r.float()
        if o.shape != r.shape:
            return False, math.inf
        if o.numel():
            d = (o - r).abs()
            worst = max(worst, (d - 2e-2 * r.abs() - 1e-4 * r.abs().max()).max().item())
            rel = max(rel, (d.max() / r.abs().max().clamp_min(1e-30)).item())
    return worst <= 5e-2 and math.isfinite(rel), rel


def _nbytes(ts) -> int:
    return sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))


def _point(op: str, shape: tuple, mode: str, make, ref_fn, impls: dict, diff: list[int], copy_gbps: float) -> dict:
    """Check then time every impl at one (op, shape, mode); make(gen) -> input list."""
    g = torch.Generator(device="cuda").manual_seed(0)
    first = make(g)
    n_sets = max(1, min(4, (256 << 20) // max(_nbytes(first), 1)))
    sets = [first] + [make(g) for _ in range(n_sets - 1)]
    moved = _nbytes(first)
    if mode == "fwd":
        with torch.no_grad():
            ref = ref_fn(*first)
        moved += _nbytes([ref] if isinstance(ref, torch.Tensor) else ref)
    else:
        leaves = [t.detach().float().requires_grad_(j in diff) for j, t in enumerate(first)]
        outs = ref_fn(*leaves)
        outs = [outs] if isinstance(outs, torch.Tensor) else list(outs)
        gc = torch.Generator(device="cuda").manual_seed(1)
        cots = [torch.randn(o.shape, device="cuda", generator=gc).to(DT) for o in outs]
        ref = list(torch.autograd.grad(outs, [leaves[j] for j in diff], [c.float() for c in cots]))
        del leaves, outs
    rows: dict = {}
    pt = {"op": op, "shape": list(shape), "mode": mode, "rows": rows}
    for name, f in impls.items():
        if _left() < 0:
            rows[name] = {"error": "skipped: time budget"}
            continue
        if f is None:
            rows[name] = {"error": "unavailable"}
            continue
        try:
            if mode == "fwd":
                with torch.no_grad():
                    ok, rel = _close(f(*[t.clone() for t in first]), ref)
                i = [0]

                def call(f=f, i=i):
                    s = sets[i[0] % len(sets)]
                    i[0] += 1
                    with torch.no_grad():
                        return f(*s)
            else:
                own = [[t.detach().clone().requires_grad_(j in diff) for j, t in enumerate(s)] for s in sets]
                o = f(*own[0])
                o = [o] if isinstance(o, torch.Tensor) else list(o)
                ok, rel = _close(torch.autograd.grad(o, [own[0][j] for j in diff], cots), ref)
                del o
                i = [0]

                def call(f=f, i=i, own=own):
                    s = own[i[0] % len(own)]
                    i[0] += 1
                    o = f(*s)
                    o = [o] if isinstance(o, torch.Tensor) else list(o)
                    return torch.autograd.grad(o, [s[j] for j in diff], cots)
            if not ok:
                rows[name] = {"error": f"wrong output (rel err {rel:.3g}): not timed"}
                continue
            call()
            ms = _bench(call)
            row = {"ms": round(ms, 5), "host_ms": round(_host_ms(call), 5), "rel_err": float(f"{rel:.3g}")}
            if mode != "fwd+bwd":
                row["pct_copy"] = round(100 * moved / ms / 1e6 / copy_gbps, 1)
            rows[name] = row
        except Exception as e:  # noqa: BLE001 - one variant failing must not hide the others
            rows[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}", "trace": traceback.format_exc()[-600:]}
        finally:
            call = own = None  # noqa: F841
            torch.cuda.empty_cache()
    RES["points"].append(pt)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "explore_glu_rope.json").write_text(json.dumps(RES, indent=1, default=str))
    print(f"== {op} {shape} {mode} ({time.perf_counter() - T0:.0f} s): " + ", ".join(
        f"{k} {v.get('ms', v.get('error', '?'))}" for k, v in rows.items()), flush=True)
    return pt


# ---------------------------------------------------------------------------------------------- GLU variants
def _glu_impls(op: str, mod, head, stage1, full: bool) -> dict:
    gelu = op == "geglu"
    fn = getattr(mod, op)
    fwd_k, rows_k = getattr(mod, f"{op}_fwd_kernel"), getattr(mod, f"{op}_fwd_rows_kernel")
    FL = mod._FastLaunch

    def flat(block: int, warps: int):
        L = FL(fwd_k)

        def f(a, b):
            c = torch.empty_like(a)
            n = a.numel()
            even, wide = n % block == 0, n + block >= 2**31
            L((block, warps, even, wide), (triton.cdiv(n, block), 1, 1), a, b, c, n, BLOCK=block, EVEN=even,
              WIDE=wide, num_warps=warps)
            return c
        return f

    def rows(a, b):  # HEAD's tiling ([ROWS, BLOCK_N] of ~4096) with this file's math
        N = a.shape[-1]
        a2, b2 = a.view(-1, N), b.view(-1, N)
        c = torch.empty_like(a2)
        key, grid, kw = mod._rows_plan(a2.shape[0], N, a.get_device())
        R(key, grid, a2, b2, c, a2.shape[0], N, N, N, N, **kw)
        return c.view(a.shape)
    R = FL(rows_k)

    def simple(kernel, block: int, warps: int, **extra):
        L = FL(kernel)

        def f(a, b):
            c = torch.empty_like(a)
            n = a.numel()
            if n % block:
                raise ValueError("variant needs BLOCK | n")
            L((block, warps), (n // block, 1, 1), a, b, c, n, BLOCK=block, num_warps=warps, **extra)
            return c
        return f

    def persistent(block: int, warps: int, pps: int):
        L = FL(glu_persistent_kernel)
        sms = torch.cuda.get_device_properties(0).multi_processor_count

        def f(a, b):
            c = torch.empty_like(a)
            n = a.numel()
            if n % block:
                raise ValueError("variant needs BLOCK | n")
            tiles = n // block
            L((block, warps, pps), (min(tiles, sms * pps), 1, 1), a, b, c, tiles, BLOCK=block, GELU=gelu,
              num_warps=warps)
            return c
        return f

    eager = (lambda a, b: F.gelu(a, approximate="tanh") * b) if gelu else (lambda a, b: F.silu(a) * b)
    impls = {"stage3": fn, "head_stage3": getattr(head, op, None) if head else None,
             "compile": torch.compile(eager, dynamic=False),
             "liger": getattr(LF, f"liger_{op}", None) if LF else None, "eager": eager}
    impls.update({f"flat_b{b}_w{w}": flat(b, w) for b, w in
                  ((1024, 4), (2048, 4), (2048, 8), (4096, 8), (512, 4), (8192, 8))[: 6 if full else 3]})
    if full:
        impls["rows_head_tiling"] = rows
        impls["stage1_flat_i64_masked"] = getattr(stage1, op, None) if stage1 else None
        impls["evict_b1024_w4"] = simple(glu_evict_kernel, 1024, 4, GELU=gelu)
        impls["evict_b2048_w8"] = simple(glu_evict_kernel, 2048, 8, GELU=gelu)
        impls["persist_b2048_w8_pps4"] = persistent(2048, 8, 4)
        impls["persist_b1024_w4_pps16"] = persistent(1024, 4, 16)
        if gelu:
            impls["gelu_tanh_approx_b1024"] = simple(geglu_tanh_approx_kernel, 1024, 4)
            impls["gelu_libdevice_b1024"] = (simple(geglu_libdevice_kernel, 1024, 4) if libdevice is not None
                                             else None)
    return impls


def _glu_bwd_impls(op: str, mod) -> dict:
    """Backward kernels alone on (dc, a, b): flat BLOCK / warps and HEAD's row tiling."""
    FL = mod._FastLaunch
    bwd_k, rows_k = getattr(mod, f"{op}_bwd_kernel"), getattr(mod, f"{op}_bwd_rows_kernel")

    def flat(block: int, warps: int):
        L = FL(bwd_k)

        def f(dc, a, b):
            da, db = torch.empty_like(a), torch.empty_like(b)
            n = a.numel()
            even, wide = n % block == 0, n + block >= 2**31
            L((block, warps, even, wide), (triton.cdiv(n, block), 1, 1), dc, a, b, da, db, n, BLOCK=block,
              EVEN=even, WIDE=wide, num_warps=warps)
            return da, db
        return f

    R = FL(rows_k)

    def rows(dc, a, b):
        N = a.shape[-1]
        M = a.numel() // N
        da, db = torch.empty_like(a), torch.empty_like(b)
        key, grid, kw = mod._rows_plan(M, N, a.get_device())
        R(key, grid, dc, a, b, da, db, M, N, N, N, N, N, N, **kw)
        return da, db

    out = {"stage3_backward": lambda dc, a, b: mod._backward(dc, a, b), "rows_head_tiling": rows}
    out.update({f"flat_b{b}_w{w}": flat(b, w) for b, w in ((1024, 4), (2048, 4), (2048, 8), (4096, 8))})
    return out


# ---------------------------------------------------------------------------------------------- rope variants
def _rope_impls(mod, head, full: bool, tiles: list | None = None) -> dict:
    FL = mod._FastLaunch
    LC, LG = FL(mod.rope_contiguous_kernel), FL(mod.rope_kernel)

    def cfg(q, k, bh, tile):
        B, H, S, D = q.shape
        Hkv = k.shape[1]
        half = D // 2
        bhalf = triton.next_power_of_2(half)
        if H % bh or Hkv % bh:
            raise ValueError("BLOCK_H must divide both head counts")
        bs = max(1, min(triton.next_power_of_2(S), tile // (bh * bhalf)))
        masked = S % bs != 0 or bhalf != half
        return B, H, Hkv, S, D, bs, bhalf, masked, (triton.cdiv(S, bs), H // bh + Hkv // bh, B)

    def tiled(bh: int, tile: int, warps: int):
        def f(q, k, cos, sin):
            B, H, Hkv, S, D, bs, bhalf, masked, grid = cfg(q, k, bh, tile)
            qo, ko = torch.empty_like(q), torch.empty_like(k)
            LC((D, bh, bs, masked, warps), grid, q, k, cos, sin, qo, ko, S, H, Hkv, S * D if cos.shape[0] > 1 else 0,
               D=D, BLOCK_H=bh, BLOCK_S=bs, BLOCK_HALF=bhalf, MASKED=masked, BACKWARD=False, num_warps=warps)
            return qo, ko
        return f

    def strided(bh: int, tile: int, warps: int):
        def f(q, k, cos, sin):
            B, H, Hkv, S, D, bs, bhalf, masked, grid = cfg(q, k, bh, tile)
            qo, ko = torch.empty_like(q), torch.empty_like(k)
            LG((D, bh, bs, masked, warps), grid, q, k, cos, sin, qo, ko, S, H, Hkv, D // 2, *q.stride()[:3],
               *k.stride()[:3], *qo.stride()[:3], *ko.stride()[:3], cos.stride(0) if cos.shape[0] > 1 else 0,
               cos.stride(1), BLOCK_H=bh, BLOCK_S=bs, BLOCK_HALF=bhalf, MASKED=masked, BACKWARD=False,
               num_warps=warps)
            return qo, ko
        return f

    def eager(q, k, cos, sin):
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        rh = lambda x: torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)  # noqa: E731
        return q * c + rh(q) * s, k * c + rh(k) * s

    impls = {"stage3": mod.rope, "head_stage3": head.rope if head else None,
             "compile": torch.compile(eager, dynamic=False), "liger": LF.liger_rope if LF else None, "eager": eager}
    grid = tiles or ([(bh, t, w) for bh in (1, 2, 4, 8) for t, w in ((1024, 4), (2048, 4), (4096, 8))]
                     + [(4, 2048, 8), (8, 4096, 4), (2, 4096, 8)] if full else [(4, 2048, 4), (8, 2048, 4)])
    impls.update({f"tile_h{bh}_t{t}_w{w}": tiled(bh, t, w) for bh, t, w in grid})
    if full:
        impls["strided_kernel_h4_t2048_w4"] = strided(4, 2048, 4)
    return impls


def _copy_gbps() -> float:
    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    ms = min(_bench(lambda: y.copy_(x)) for _ in range(2))
    return 2 * (1 << 30) / ms / 1e6


def _fmt_point(pt: dict) -> str:
    rows = pt["rows"]
    ok = {k: v for k, v in rows.items() if "ms" in v}
    base = {k: ok[k]["ms"] for k in ("stage3", "compile", "liger", "head_stage3", "eager") if k in ok}
    s3 = ok.get("stage3")
    head = (f"{pt['op']} {'x'.join(map(str, pt['shape']))} {pt['mode']}: "
            + " ".join(f"{k.replace('_stage3', '')} {v:.4f}" for k, v in base.items()))
    if s3:
        head += f" | s3 host {s3['host_ms']:.4f}" + (f" {s3['pct_copy']}%" if "pct_copy" in s3 else "")
    rest = sorted(((v["ms"], k, v) for k, v in ok.items() if k not in base), key=lambda r: r[0])
    tail = " | " + " ".join(f"{k} {ms:.4f}" + (f"({v['pct_copy']}%,h{v['host_ms']:.3f})" if "pct_copy" in v else "")
                            for ms, k, v in rest[:5])
    bad = [k for k, v in rows.items() if "error" in v and not v["error"].startswith(("unavailable", "skipped"))]
    return (head + tail + (f" | ERR {','.join(bad)}" if bad else ""))[:398]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    copy = _copy_gbps()
    RES["env"] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                  "copy_gbps": round(copy, 1)}
    print(f"# {RES['env']}", flush=True)
    mods, heads, refs, s1 = {}, {}, {}, {}
    for op in ("swiglu", "geglu", "rope"):
        mods[op] = _load(ROOT / "examples" / op / "stage3.py", f"x_{op}_stage3")
        refs[op] = _load(ROOT / "examples" / op / "reference.py", f"x_{op}_ref")
        heads[op] = _load_head(f"examples/{op}/stage3.py", f"x_{op}_head")
        s1[op] = _load(ROOT / "examples" / op / "stage1.py", f"x_{op}_stage1")

    def r(g, *s, scale=1.0):
        return torch.randn(*s, device="cuda", generator=g, dtype=torch.float32).mul_(scale).to(DT)

    def glu_make(shape):
        return lambda g: [r(g, *shape, scale=3.0), r(g, *shape)]

    def rope_make(shape, transposed=False):
        B, H, Hkv, S, D = shape

        def make(g):
            pos = torch.arange(S, device="cuda", dtype=torch.float32)
            inv = 1.0 / 10000 ** (torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D)
            emb = torch.cat([pos[:, None] * inv] * 2, dim=-1)[None]
            if transposed:  # HF's (B, S, H, D) projections viewed as (B, H, S, D)
                q, k = r(g, B, S, H, D).transpose(1, 2), r(g, B, S, Hkv, D).transpose(1, 2)
            else:
                q, k = r(g, B, H, S, D), r(g, B, Hkv, S, D)
            return [q, k, emb.cos().to(DT), emb.sin().to(DT)]
        return make

    glu_bench, glu_sweep = (4, 4096, 14336), [(1, 2048, 14336), (4, 4096, 4096)]
    rope_bench, rope_sweep = (4, 32, 8, 4096, 128), [(4, 32, 8, 1024, 128), (4, 32, 8, 4096, 64)]
    plan = []
    for op in ("swiglu", "geglu"):
        plan.append((op, glu_bench, "fwd", lambda op=op: _glu_impls(op, mods[op], heads[op], s1[op], True)))
    plan.append(("rope", rope_bench, "fwd", lambda: _rope_impls(mods["rope"], heads["rope"], True)))
    for op in ("swiglu", "geglu"):
        plan.append((op, glu_bench, "fwd+bwd", lambda op=op: {k: v for k, v in _glu_impls(
            op, mods[op], heads[op], None, False).items() if k in ("stage3", "head_stage3", "compile", "liger")}))
        plan.append((op, glu_bench, "bwd_kernel", lambda op=op: _glu_bwd_impls(op, mods[op])))
    plan.append(("rope", rope_bench, "fwd+bwd", lambda: {k: v for k, v in _rope_impls(
        mods["rope"], heads["rope"], False).items() if k in ("stage3", "head_stage3", "compile", "liger")}))
    for op in ("swiglu", "geglu"):
        for s in glu_sweep:
            plan.append((op, s, "fwd", lambda op=op: _glu_impls(op, mods[op], heads[op], s1[op], False)))
    for s in rope_sweep:
        plan.append(("rope", s, "fwd", lambda: _rope_impls(mods["rope"], heads["rope"], False)))
    plan.append(("rope", rope_bench, "fwd_transposed_view", lambda: {k: v for k, v in _rope_impls(
        mods["rope"], heads["rope"], False).items() if k in ("stage3", "head_stage3", "compile", "liger")}))

    points = []
    for op, shape, mode, impls in plan:
        if _left() < 5:
            RES["notes"].append(f"{op} {shape} {mode}: skipped (time budget)")
            continue
        try:
            impls = impls()
            if op == "rope":
                make = rope_make(shape, transposed=mode == "fwd_transposed_view")
                ref_fn, diff = refs[op].rope, [0, 1]
            else:
                make, ref_fn, diff = glu_make(shape), getattr(refs[op], op), [0, 1]
            m = "fwd" if mode.startswith("fwd") and mode != "fwd+bwd" else mode
            if mode == "bwd_kernel":  # inputs (dc, a, b), reference grads in fp32
                base = make

                def make(g, base=base, shape=shape):
                    a, b = base(g)
                    return [r(g, *shape), a, b]

                def ref_fn(dc, a, b, op=op):
                    with torch.enable_grad():  # _point runs forward references under no_grad
                        af, bf = a.float().requires_grad_(), b.float().requires_grad_()
                        out = getattr(refs[op], op)(af, bf)
                        return [t.to(DT) for t in torch.autograd.grad(out, [af, bf], dc.float())]
                m = "fwd"  # timed as a plain call under no_grad
            pt = _point(op, shape, m, make, ref_fn, impls, diff, copy)
            pt["mode"] = mode
            points.append(pt)
        except Exception as e:  # noqa: BLE001
            RES["notes"].append(f"{op} {shape} {mode}: {type(e).__name__}: {str(e)[:300]}")
            print(traceback.format_exc()[-1500:], flush=True)
        finally:
            torch.cuda.empty_cache()
    RES["wall_s"] = round(time.perf_counter() - T0, 1)
    (OUT / "explore_glu_rope.json").write_text(json.dumps(RES, indent=1, default=str))
    for n in RES["notes"]:
        print(f"note: {n[:390]}")
    print(f"\n# copy {copy:.0f} GB/s; ms medians; 'pct' = % of copy rate; h = host ms per call; wall {RES['wall_s']} s")
    for pt in points:
        print(_fmt_point(pt))


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("explore_glu_rope.py times GPU kernels: no CUDA device here")
    main()
