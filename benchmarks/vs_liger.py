"""Gallery stage 3 beside Liger-Kernel, torch eager and torch.compile, forward and forward+backward (issue 20).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/vs_liger.py [--only swiglu,rope] [--budget-s 330]

Per op (OPS: the gallery ops Liger also has, and logsumexp and prefix_scan) at its bench shape, forward and
forward+backward, then a small forward sweep: stage 3, Liger, eager as a Hugging Face model runs it, and torch.compile
of it (afresh per point, static shapes). Each point: REPEATS do_bench medians (L2 flushed, small inputs rotated),
their spread, the host time to issue one call, GB/s and % of the measured copy bandwidth (forward), TFLOP/s for the
fused linear CE. Every output is checked against eager first. $OUT/vs_liger.json after every point; the table last.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")
REPEATS = 3
WARMUP_MS, REP_MS = 25, 100
DT = torch.bfloat16


# ---------------------------------------------------------------------------------------------- implementations
def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stage3(example: str, entry: str) -> Callable:
    return getattr(_load(ROOT / "examples" / example / "stage3.py", f"gallery_{example}_stage3"), entry)


try:
    import liger_kernel.transformers.functional as LF  # noqa: N812

    LIGER = None
except Exception as e:  # noqa: BLE001 - optional comparison: any import failure is a note, not a crash
    LF, LIGER = None, f"liger_kernel not importable ({type(e).__name__}: {str(e)[:120]})"


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


# Eager baselines: what transformers' modules compute (LlamaRMSNorm upcasts to fp32; LlamaMLP and
# apply_rotary_pos_emb stay in bf16; the LM head is a bf16 matmul and the loss upcasts the logits).
def _t_rmsnorm(x, w):
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)


def _t_rope(q, k, cos, sin):
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s


TORCH = {
    "rmsnorm": _t_rmsnorm,
    "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "cross_entropy": lambda logits, t: F.cross_entropy(logits.float(), t, ignore_index=-100),
    "swiglu": lambda a, b: F.silu(a) * b,
    "geglu": lambda a, b: F.gelu(a, approximate="tanh") * b,
    "rope": _t_rope,
    "flce": lambda x, w, t: F.cross_entropy((x @ w.t()).float(), t, ignore_index=-100),
    "logsumexp": lambda x: torch.logsumexp(x.float(), dim=-1).to(x.dtype),
    "prefix_scan": lambda x: torch.cumsum(x, dim=-1),
}


def _liger(op: str) -> Callable | None:
    if LF is None:
        return None
    return {
        # in_place=False: Liger's default writes dX over the incoming gradient, which the timing loop reuses.
        "rmsnorm": lambda x, w: LF.liger_rms_norm(x, w, 1e-6, in_place=False),
        "layernorm": lambda x, w, b: LF.liger_layer_norm(x, w, b, 1e-5),
        "softmax": LF.liger_softmax,
        "cross_entropy": lambda logits, t: LF.liger_cross_entropy(logits, t, ignore_index=-100),
        "swiglu": LF.liger_swiglu,
        "geglu": LF.liger_geglu,
        "rope": LF.liger_rope,
        "flce": lambda x, w, t: LF.liger_fused_linear_cross_entropy(x, w, t, ignore_index=-100),
    }.get(op)


# ---------------------------------------------------------------------------------------------- inputs
def _targets(n: int, v: int, g: torch.Generator) -> torch.Tensor:
    t = torch.randint(0, v, (n,), device="cuda", generator=g)
    t[torch.randint(0, 5, (n,), device="cuda", generator=g) == 0] = -100
    t[0] = 0
    return t


def _make(op: str, shape: tuple, g: torch.Generator) -> tuple[list, list[int]]:
    """(inputs, indices of differentiable inputs) for one op at one shape, bf16 on the GPU."""
    r = lambda *s, scale=1.0: torch.randn(*s, device="cuda", generator=g, dtype=torch.float32).mul_(scale).to(DT)
    if op in ("rmsnorm", "layernorm"):
        M, N = shape
        ins = [r(M, N), (1 + 0.1 * torch.randn(N, device="cuda", generator=g)).to(DT)]
        if op == "layernorm":
            ins.append(r(N))
        return ins, list(range(len(ins)))
    if op in ("softmax", "logsumexp", "prefix_scan"):
        x = r(*shape) if op != "prefix_scan" else torch.randn(*shape, device="cuda", generator=g)
        return [x], [0]
    if op == "cross_entropy":
        N, V = shape
        return [r(N, V), _targets(N, V, g)], [0]
    if op in ("swiglu", "geglu"):
        return [r(*shape, scale=3.0), r(*shape)], [0, 1]
    if op == "rope":
        B, H, Hkv, S, D = shape
        pos = torch.arange(S, device="cuda", dtype=torch.float32)
        inv = 1.0 / 10000 ** (torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D)
        emb = torch.cat([pos[:, None] * inv] * 2, dim=-1)[None]
        return [r(B, H, S, D), r(B, Hkv, S, D), emb.cos().to(DT), emb.sin().to(DT)], [0, 1]
    if op == "flce":
        BT, H, V = shape
        return [r(BT, H), r(V, H, scale=H ** -0.5), _targets(BT, V, g)], [0, 1]
    raise KeyError(op)


# op -> (gallery example, stage-3 entry, bench shape, forward sweep shapes, has backward)
OPS: dict[str, tuple[str, str, tuple, list[tuple], bool]] = {
    "rmsnorm": ("rmsnorm", "rms_norm", (8192, 8192), [(8192, 1024), (16384, 16384)], True),
    "layernorm": ("layernorm", "layer_norm", (8192, 8192), [(8192, 1024), (16384, 16384)], True),
    "softmax": ("softmax", "reference", (16384, 4096), [(16384, 1024), (16384, 16384)], False),
    "cross_entropy": ("cross_entropy", "cross_entropy", (8192, 128256), [(8192, 32000)], True),
    "swiglu": ("swiglu", "swiglu", (4, 4096, 14336), [(1, 2048, 14336), (4, 4096, 4096)], True),
    "geglu": ("geglu", "geglu", (4, 4096, 14336), [(1, 2048, 14336), (4, 4096, 4096)], True),
    "rope": ("rope", "rope", (4, 32, 8, 4096, 128), [(4, 32, 8, 1024, 128), (4, 32, 8, 4096, 64)], True),
    "flce": ("fused_linear_cross_entropy", "fused_linear_cross_entropy", (8192, 4096, 128256),
             [(4096, 4096, 32000)], True),
    "logsumexp": ("logsumexp", "logsumexp", (16384, 4096), [(64, 1 << 20)], False),
    "prefix_scan": ("prefix_scan", "cumsum", (4096, 16384), [(16, 1 << 20)], False),
}


# ---------------------------------------------------------------------------------------------- timing
def _nbytes(objs: Any) -> int:
    if isinstance(objs, torch.Tensor):
        return objs.numel() * objs.element_size()
    if isinstance(objs, (list, tuple)):
        return sum(_nbytes(o) for o in objs)
    return 0


def _host_ms(fn: Callable[[], Any], calls: int = 20, loops: int = 5) -> float:
    """Host time to issue one call: the best of `loops` loops of `calls` back-to-back calls between two syncs.
    The best, not the median: the CPU's own noise (other threads, frequency changes) only ever adds time, and one
    20-call loop right after do_bench read 2-3x the steady figure on the H200 host (2026-12-04)."""
    best = math.inf
    for _ in range(loops):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e3)
        torch.cuda.synchronize()
    return best


def _time(fn: Callable[[], Any]) -> dict[str, Any]:
    import triton.testing

    meds = [float(triton.testing.do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median"))
            for _ in range(REPEATS)]
    med = sorted(meds)[len(meds) // 2]
    return {"median_ms": round(med, 5), "repeat_medians_ms": [round(m, 5) for m in meds],
            "spread": round((max(meds) - min(meds)) / med, 4) if med else None,
            "host_ms_per_call": round(_host_ms(fn), 5)}


def _close(out: Any, ref: Any) -> tuple[bool, float]:
    outs = [out] if isinstance(out, torch.Tensor) else list(out)
    refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
    worst = 0.0
    for o, r in zip(outs, refs, strict=False):
        o, r = o.float(), r.float()
        if o.shape != r.shape:
            return False, math.inf
        # bf16-level relative error, plus 1e-4 of the largest value: long fp32 sums (a 1M-element scan) err by
        # about sqrt(N) ulps of the running sum, which is not relative to the element itself.
        err = ((o - r).abs() - 2e-2 * r.abs() - 1e-4 * r.abs().max()).max().item() if o.numel() else 0.0
        worst = max(worst, err)
    return worst <= 5e-2, worst


def _bench_point(op: str, fns: dict[str, Callable | None], shape: tuple, backward: bool, copy_gbps: float,
                 read_gbps: float | None = None) -> dict[str, dict[str, Any]]:
    """Every implementation at one (op, shape, mode)."""
    def fresh() -> tuple[list[list], list[int]]:
        # The same seeded sets for every implementation: Liger's cross-entropy and SwiGLU write their gradients
        # over their inputs, so no implementation may see another one's inputs.
        g = torch.Generator(device="cuda").manual_seed(0)
        first, diff = _make(op, shape, g)
        n_sets = max(1, min(4, (256 << 20) // max(_nbytes(first), 1)))  # rotate small inputs; big ones pass L2
        return [first] + [_make(op, shape, g)[0] for _ in range(n_sets - 1)], diff

    sets, diff = fresh()
    set_bytes = _nbytes(sets[0])
    if op == "cross_entropy":  # the minimum: ignored rows need not be read (the example's BYTES, issue 28)
        set_bytes -= int((sets[0][1] == -100).sum()) * sets[0][0].shape[-1] * sets[0][0].element_size()
    with torch.no_grad():
        ref = fns["eager"](*sets[0])
    del sets
    rows: dict[str, dict[str, Any]] = {}
    for impl, f in fns.items():
        if f is None:
            rows[impl] = {"skipped": LIGER or "Liger-Kernel has no such op"}
            continue
        try:
            sets, _ = fresh()
            with torch.no_grad():  # twice: a gallery wrapper's second call takes its cached launch path
                ok, err = _close(f(*[t.clone() for t in sets[0]]), ref)
                if ok:
                    ok, err = _close(f(*[t.clone() for t in sets[0]]), ref)
            if not ok:
                rows[impl] = {"error": f"output differs from eager (max excess {err:.3g}); not timed"}
                continue
            i = [0]
            if backward:
                leaves = [[t.detach().requires_grad_(j in diff) for j, t in enumerate(s)] for s in sets]
                outs0 = f(*leaves[0])
                outs0 = [outs0] if isinstance(outs0, torch.Tensor) else list(outs0)
                g = torch.Generator(device="cuda").manual_seed(1)
                cots = [torch.randn(o.shape, device="cuda", generator=g).to(o.dtype) for o in outs0]
                del outs0

                def call(f=f, leaves=leaves, cots=cots, i=i):
                    s = leaves[i[0] % len(leaves)]
                    i[0] += 1
                    outs = f(*s)
                    o = [outs] if isinstance(outs, torch.Tensor) else list(outs)
                    return torch.autograd.grad(o, [s[j] for j in diff], cots)
            else:
                def call(f=f, sets=sets, i=i):
                    s = sets[i[0] % len(sets)]
                    i[0] += 1
                    with torch.no_grad():
                        return f(*s)
            call()
            row = _time(call)
            if not backward and op != "flce":
                moved = set_bytes + _nbytes(ref)
                row["gbps"] = round(moved / row["median_ms"] / 1e6, 1)
                row["pct_copy_bw"] = round(100 * row["gbps"] / copy_gbps, 1) if copy_gbps else None
                if read_gbps:
                    row["pct_read_rate"] = round(100 * row["gbps"] / read_gbps, 1)
            if op == "flce":
                BT, H, V = shape
                row["tflops"] = round((6 if backward else 2) * BT * H * V / row["median_ms"] / 1e9, 1)
            rows[impl] = row
        except torch.OutOfMemoryError as e:
            rows[impl] = {"error": f"out of memory: {str(e)[:160]}"}
        except Exception as e:  # noqa: BLE001 - one implementation failing must not hide the others
            rows[impl] = {"error": f"{type(e).__name__}: {str(e)[:300]}", "trace": traceback.format_exc()[-800:]}
        finally:
            sets = leaves = call = None  # noqa: F841 - free this implementation's inputs before the next one
            torch.cuda.empty_cache()
    return rows


def _copy_gbps() -> float:
    import triton.testing

    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    ms = min(triton.testing.do_bench(lambda: y.copy_(x), warmup=25, rep=100) for _ in range(3))
    x = y = None  # noqa: F841
    torch.cuda.empty_cache()
    return 2 * (1 << 30) / ms / 1e6


def _read_gbps() -> float:
    """torch.sum over 1 GiB of fp32: a read-only rate (a lower bound of the read bandwidth), the roofline of ops
    that read much more than they write (logsumexp, cross-entropy forward), for which the copy figure is too low."""
    import triton.testing

    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32).uniform_()
    ms = min(triton.testing.do_bench(lambda: x.sum(), warmup=25, rep=100) for _ in range(3))
    x = None  # noqa: F841
    torch.cuda.empty_cache()
    return (1 << 30) / ms / 1e6


# ---------------------------------------------------------------------------------------------- report
def _fmt(row: dict[str, Any] | None) -> str:
    if not row:
        return "-"
    if "median_ms" in row:
        return f"{row['median_ms']:.4f}"
    return "skip" if "skipped" in row else "ERR"


def _table(points: list[dict[str, Any]]) -> str:
    head = ("| op | shape | mode | stage3 ms | liger ms | eager ms | compile ms | stage3 host ms | stage3 % copy | "
            "vs liger | vs compile |")
    lines = [head, "|" + "---|" * 11]
    for p in points:
        im = p["impls"]
        s3 = im.get("stage3", {})

        def ratio(other: str, im: dict = im, s3: dict = s3) -> str:
            if "median_ms" in s3 and "median_ms" in im.get(other, {}):
                return f"{im[other]['median_ms'] / s3['median_ms']:.2f}x"
            return "-"

        lines.append(f"| {p['op']} | {'x'.join(map(str, p['shape']))} | {p['mode']} | {_fmt(s3)} | "
                     f"{_fmt(im.get('liger'))} | {_fmt(im.get('eager'))} | {_fmt(im.get('torch.compile'))} | "
                     f"{s3.get('host_ms_per_call', '-')} | {s3.get('pct_copy_bw', s3.get('tflops', '-'))} | "
                     f"{ratio('liger')} | {ratio('torch.compile')} |")
    return "\n".join(lines)


def main(only: list[str] | None, budget_s: float) -> None:
    """Run every op (or `only`), write the JSON under $OUT, print the table."""
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    for name in ("recompile_limit", "cache_size_limit"):  # one compile per (op, shape, mode): more than the default 8
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "triton": __import__("triton").__version__,
           "liger_kernel": importlib.metadata.version("liger-kernel") if LF else LIGER}
    env["copy_gbps"] = round(_copy_gbps(), 1)
    env["read_gbps_torch_sum"] = round(_read_gbps(), 1)
    print(f"# {env}", flush=True)
    results: dict[str, Any] = {"environment": env, "method": __doc__, "points": [], "notes": []}
    points: list[dict[str, Any]] = results["points"]
    ops = only or list(OPS)
    fns_of: dict[str, dict[str, Callable | None]] = {}
    for op in ops:
        example, entry = OPS[op][:2]
        try:
            fns_of[op] = {"stage3": _stage3(example, entry), "liger": _liger(op), "eager": TORCH[op],
                          "torch.compile": TORCH[op]}  # compiled afresh per point, below
        except Exception as e:  # noqa: BLE001
            results["notes"].append(f"{op}: could not load ({type(e).__name__}: {e})")
    # Every op's bench shape first (forward, then forward+backward), then the sweeps: under the time budget the
    # acceptance table fills before the sweep rows do.
    plan = [(op, OPS[op][2], mode) for op in fns_of for mode in ("fwd", "fwd+bwd") if mode == "fwd" or OPS[op][4]]
    plan += [(op, s, "fwd") for op in fns_of for s in OPS[op][3]]
    for op, shape, mode in plan:
        if time.perf_counter() - t_start > budget_s:
            results["notes"].append(f"{op} {shape} {mode}: skipped, time budget of {budget_s:.0f} s spent")
            continue
        t0 = time.perf_counter()
        # A fresh torch.compile per (op, shape, mode), static shapes: one compiled function reused across the sweep
        # recompiles with dynamic shapes at the second shape, whose generic kernels ran up to 3x slower (layernorm
        # 16384x16384: 0.774 ms that way, 0.261 ms compiled for the shape alone): an unfairly weak baseline.
        torch._dynamo.reset()
        fns = {**fns_of[op], "torch.compile": torch.compile(TORCH[op], dynamic=False)}
        rows = _bench_point(op, fns, shape, mode == "fwd+bwd", env["copy_gbps"], env["read_gbps_torch_sum"])
        pt = {"op": op, "shape": list(shape), "mode": mode, "impls": rows, "wall_s": round(time.perf_counter() - t0, 1)}
        points.append(pt)
        print(f"== {op} {shape} {mode} ({pt['wall_s']} s): " +
              ", ".join(f"{k} {_fmt(v)}" for k, v in rows.items()), flush=True)
        (OUT / "vs_liger.json").write_text(json.dumps(results, indent=2, default=str))
    results["wall_s"] = round(time.perf_counter() - t_start, 1)
    (OUT / "vs_liger.json").write_text(json.dumps(results, indent=2, default=str))
    for n in results["notes"]:
        print(f"note: {n}")
    print(f"\n{env}\n" + _table(points))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help=f"comma-separated ops, in order, from {','.join(OPS)}")
    ap.add_argument("--budget-s", type=float, default=330.0, help="stop starting new points after this many s")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("vs_liger.py times GPU kernels: no CUDA device here")
    main(a.only.split(",") if a.only else None, a.budget_s)
