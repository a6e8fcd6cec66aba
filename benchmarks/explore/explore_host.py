"""Where the memory-bound stage-3 wrappers still lose (issue 20, items 1-3), session of 2026-12-04 (2).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/explore_host.py

1. Host time per call, GPU idle vs busy: the same 20-call loop (best of 5) as vs_liger.py's `_host_ms`, once
   right after a sync (the GPU runs the loop's own kernels) and once behind a 20 ms `torch.cuda._sleep` (every
   launch lands in a queue the GPU has not reached). If a wrapper's host time drops behind the sleep, the loop
   was measuring launches throttled by the GPU, not Python. Rows: the raw launcher of a small kernel,
   torch.empty_like, every memory-bound stage 3 at its bench shape and at a tiny shape, torch.compile's rmsnorm.
   A cProfile of the rmsnorm wrapper (tiny shape) shows the Python left per call.
2. torch.compile's generated Triton code for rmsnorm and layernorm forward at 8192x8192 bf16 ($OUT/inductor_*.py).
3. RMSNorm forward kernel variants at 8192x8192 bf16, one row per program: num_warps, eviction policy of x and the
   weight, streaming store (.cs), 1/sqrt vs rsqrt; do_bench median (L2 flushed), 3 repeats, inputs rotated.
3b. (rms_loop) Inductor's looped shape: two passes over the row (the second served from L2), XBLOCK rows,
   RBLOCK columns per step.
4. LayerNorm 8192x8192 bf16 forward and backward timed apart: stage 3 vs Liger vs torch.compile.
PARTS=host,rms_loop,... picks parts (default all). Writes $OUT/explore_host.json; prints everything.
"""

from __future__ import annotations

import cProfile
import importlib.util
import io
import json
import math
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VL = _load(ROOT / "benchmarks" / "vs_liger.py", "vs_liger_for_host")
RES: dict[str, Any] = {"env": {"gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
                               "torch": torch.__version__, "triton": triton.__version__,
                               "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}}


def host_us(fn, busy: bool, calls: int = 20, loops: int = 5) -> float:
    best = math.inf
    for _ in range(loops):
        torch.cuda.synchronize()
        if busy:
            torch.cuda._sleep(40_000_000)  # ~20 ms at ~2 GHz: the loop's launches all queue behind it
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return round(best, 2)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def part_host() -> None:
    rows: dict[str, dict[str, float]] = {}
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 1024), 1, 1)
    ck = scale_kernel[grid](x, y, x.numel(), BLOCK=1024)
    stream = torch.cuda.current_stream().cuda_stream
    big = torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16)
    fns = {"raw launcher (1M fp32)": lambda: ck.run(grid[0], 1, 1, stream, ck.function, ck.packed_metadata,
                                                     None, None, None, x, y, x.numel(), 1024),
           "torch.empty_like 8192^2 bf16": lambda: torch.empty_like(big)}
    g = torch.Generator(device="cuda").manual_seed(0)
    for op, shapes in (("rmsnorm", [(8192, 8192), (16, 8192)]), ("softmax", [(16384, 4096), (16, 4096)]),
                       ("layernorm", [(8192, 8192), (16, 8192)]), ("logsumexp", [(16384, 4096), (16, 4096)]),
                       ("prefix_scan", [(4096, 16384), (16, 16384)])):
        example, entry = VL.OPS[op][:2]
        f = VL._stage3(example, entry)
        for shape in shapes:
            ins, _ = VL._make(op, shape, g)
            with torch.no_grad():
                f(*ins)
            fns[f"{op} stage3 {'x'.join(map(str, shape))}"] = (lambda f=f, ins=ins: f(*ins))
    xr, wr = VL._make("rmsnorm", (8192, 8192), g)[0]
    c = torch.compile(VL.TORCH["rmsnorm"], dynamic=False)
    with torch.no_grad():
        c(xr, wr)
    fns["torch.compile rmsnorm 8192x8192"] = lambda: c(xr, wr)
    with torch.no_grad():
        for name, fn in fns.items():
            fn()
            rows[name] = {"idle_us": host_us(fn, False), "busy_us": host_us(fn, True)}
            print(f"host {name:40s} idle {rows[name]['idle_us']:8.2f} us   behind sleep {rows[name]['busy_us']:8.2f}",
                  flush=True)
        rms = VL._stage3("rmsnorm", "rms_norm")
        xs, ws = VL._make("rmsnorm", (16, 8192), g)[0]
        rms(xs, ws)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(2000):
            rms(xs, ws)
        prof.disable()
        torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
    RES["host"] = rows
    RES["rmsnorm_profile"] = s.getvalue()
    print(s.getvalue()[:6000], flush=True)


def part_inductor() -> None:
    from torch._inductor.utils import run_and_get_code

    g = torch.Generator(device="cuda").manual_seed(0)
    for op in ("rmsnorm", "layernorm"):
        torch._dynamo.reset()
        ins, _ = VL._make(op, (8192, 8192), g)
        with torch.no_grad():
            _, codes = run_and_get_code(torch.compile(VL.TORCH[op], dynamic=False), *ins)
        (OUT / f"inductor_{op}.py").write_text("\n\n# ----\n".join(codes))
        for code in codes:  # the kernel's decorator lines: its config
            for line in code.splitlines():
                if "triton_meta" in line or "num_warps" in line or "XBLOCK" in line or "R0_BLOCK" in line \
                        or "eviction" in line:
                    print(f"inductor {op}: {line.strip()[:300]}", flush=True)


@triton.jit
def rms_variant_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK_N: tl.constexpr, EV_X: tl.constexpr, EV_W: tl.constexpr,
                       CS_Y: tl.constexpr, RSQRT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    if EV_X:
        x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0, eviction_policy="evict_first").to(tl.float32)
    else:
        x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0).to(tl.float32)
    if RSQRT:
        rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    else:
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    if EV_W:
        w = tl.load(w_ptr + cols, mask=m, other=0.0, eviction_policy="evict_last").to(tl.float32)
    else:
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    y = (x * rstd * w).to(y_ptr.dtype.element_ty)
    if CS_Y:
        tl.store(y_ptr + row * N + cols, y, mask=m, cache_modifier=".cs")
    else:
        tl.store(y_ptr + row * N + cols, y, mask=m)


@triton.jit
def rms_loop_kernel(x_ptr, w_ptr, y_ptr, M, N, eps, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    """Inductor's shape of it: two loops over the row, the first reading x with evict_last (kept in L2 for the
    second), the second with evict_first; few registers per thread whatever N is."""
    rows = (tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)).to(tl.int64)[:, None]
    rmask = rows < M
    base = tl.arange(0, RBLOCK)[None, :]
    acc = tl.zeros([XBLOCK, RBLOCK], dtype=tl.float32)
    for off in tl.range(0, N, RBLOCK):
        cols = off + base
        x = tl.load(x_ptr + rows * N + cols, mask=rmask & (cols < N), other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        acc += x * x
    rstd = tl.math.rsqrt(tl.sum(acc, axis=1)[:, None] / N + eps)
    for off in tl.range(0, N, RBLOCK):
        cols = off + base
        m = rmask & (cols < N)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        x = tl.load(x_ptr + rows * N + cols, mask=m, other=0.0, eviction_policy="evict_first").to(tl.float32)
        tl.store(y_ptr + rows * N + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=m)


def part_rms_loop(copy_gbps: float) -> None:
    M = N = 8192
    bench = _RmsBench(copy_gbps)
    for xb in (1, 2):
        for rb in (1024, 2048, 4096):
            for warps in (4, 8, 16):
                y = torch.empty_like(bench.sets[0][0])

                def launch(x, w, y=y, xb=xb, rb=rb, warps=warps):
                    rms_loop_kernel[(triton.cdiv(M, xb),)](x, w, y, M, N, 1e-6, XBLOCK=xb, RBLOCK=rb,
                                                           num_warps=warps)
                    return y
                bench.time(f"loop_x{xb}_r{rb}_w{warps}", launch)
    RES["rms_loop"] = bench.out


def _bench(fn) -> dict[str, Any]:
    meds = [float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")) for _ in range(3)]
    return {"ms": round(sorted(meds)[1], 5), "spread": round((max(meds) - min(meds)) / sorted(meds)[1], 4)}


class _RmsBench:
    """RMSNorm 8192x8192 bf16 variants, each checked against eager on the first input set before it is timed over
    two alternating sets (the check comes first: timing leaves the other set's answer in a shared output)."""

    M = N = 8192

    def __init__(self, copy_gbps: float):
        g = torch.Generator(device="cuda").manual_seed(1)
        self.sets = [VL._make("rmsnorm", (self.M, self.N), g)[0] for _ in range(2)]
        self.ref = VL.TORCH["rmsnorm"](*self.sets[0])
        self.copy_gbps = copy_gbps
        self.out: dict[str, Any] = {}
        self._it = 0

    def _rot(self) -> list:
        self._it += 1
        return self.sets[self._it % 2]

    def time(self, name: str, fn, check: bool = True) -> None:
        try:
            got = fn(*self.sets[0])
            err = (got.float() - self.ref.float()).abs().max().item() if check else None
            r = _bench(lambda: fn(*self._rot()))
            r["pct_copy"] = round(2 * self.M * self.N * 2 / r["ms"] / 1e6 / self.copy_gbps * 100, 1)
            if check:
                r["max_err"] = err
        except Exception as e:  # noqa: BLE001
            r = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        self.out[name] = r
        print(f"rms {name:32s} {r}", flush=True)


def part_rms_variants(copy_gbps: float) -> None:
    M = N = 8192
    bench = _RmsBench(copy_gbps)
    with torch.no_grad():
        bench.time("compile", torch.compile(VL.TORCH["rmsnorm"], dynamic=False), check=False)
        bench.time("stage3", VL._stage3("rmsnorm", "rms_norm"), check=False)
        for warps in (8, 16, 32):
            for ev_x in (0, 1):
                for ev_w in (0, 1):
                    for cs in (0, 1):
                        for rs in (0, 1):
                            if rs and (ev_w or cs):
                                continue
                            y = torch.empty_like(bench.sets[0][0])

                            def launch(x, w, y=y, warps=warps, ev_x=ev_x, ev_w=ev_w, cs=cs, rs=rs):
                                rms_variant_kernel[(M,)](x, w, y, N, 1e-6, BLOCK_N=N, EV_X=ev_x, EV_W=ev_w, CS_Y=cs,
                                                         RSQRT=rs, num_warps=warps)
                                return y
                            bench.time(f"w{warps}_evx{ev_x}_evw{ev_w}_cs{cs}_rsqrt{rs}", launch)
    RES["rms_variants"] = bench.out


def part_layernorm_split() -> None:
    g = torch.Generator(device="cuda").manual_seed(2)
    x, w, b = VL._make("layernorm", (8192, 8192), g)[0]
    dy = torch.randn_like(x)
    impls = {"stage3": VL._stage3("layernorm", "layer_norm"), "liger": VL._liger("layernorm"),
             "compile": torch.compile(VL.TORCH["layernorm"], dynamic=False)}
    out: dict[str, Any] = {}
    for name, f in impls.items():
        if f is None:
            continue
        xs, ws, bs = (t.detach().clone().requires_grad_(True) for t in (x, w, b))
        y = f(xs, ws, bs)
        torch.autograd.grad(y, [xs, ws, bs], dy, retain_graph=True)
        r = {"fwd_grad": _bench(lambda f=f, xs=xs, ws=ws, bs=bs: f(xs, ws, bs)),
             "bwd_only": _bench(lambda y=y, xs=xs, ws=ws, bs=bs: torch.autograd.grad(y, [xs, ws, bs], dy,
                                                                                      retain_graph=True))}
        out[name] = r
        print(f"layernorm 8192^2 {name:8s} fwd(with grad) {r['fwd_grad']}  bwd {r['bwd_only']}", flush=True)
    RES["layernorm_split"] = out


def main(parts: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    copy_gbps = VL._copy_gbps()
    RES["env"]["copy_gbps"] = round(copy_gbps, 1)
    print(RES["env"], flush=True)
    table = {"host": part_host, "inductor": part_inductor, "rms_variants": lambda: part_rms_variants(copy_gbps),
             "rms_loop": lambda: part_rms_loop(copy_gbps), "layernorm_split": part_layernorm_split}
    for part in (table[p] for p in parts):
        try:
            part()
        except Exception as e:  # noqa: BLE001 - one part failing must not lose the others
            import traceback

            RES.setdefault("errors", []).append(traceback.format_exc()[-2000:])
            print(f"part failed: {type(e).__name__}: {e}", flush=True)
        (OUT / "explore_host.json").write_text(json.dumps(RES, indent=2, default=str))


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("explore_host.py times GPU launches: no CUDA device here")
    main((os.environ.get("PARTS") or "host,inductor,rms_variants,rms_loop,layernorm_split").split(","))
