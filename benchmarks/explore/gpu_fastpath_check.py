"""GPU correctness of the gallery's cached launch path (`_FastLaunch`), every memory-bound stage 3 (issue 20).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/gpu_fastpath_check.py

`_FastLaunch` launches a compiled kernel through its own launcher from the second call of a key on; until
2026-12-04 it never did on Triton 3.6 (an empty HookChain read as a hook), so the GPU had not run that path. Here
every op runs at its bench shape and at small odd shapes, alternating two input sets (A, B, A: an output cached
on shape or pointer shows up as B's answer to A), forward under no_grad and, where the op has a backward,
forward+backward; each output is compared with eager PyTorch on float32 copies of the inputs (vs_liger.py's
inputs and baselines). A row fails when any call differs, or when the op's launchers never took the cached path.
Writes $OUT/gpu_fastpath_check.json; exits 1 on any failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VL = _load(ROOT / "benchmarks" / "vs_liger.py", "vs_liger_for_fastpath")
SMALL = {
    "rmsnorm": [(37, 1000), (7, 4097)], "layernorm": [(37, 1000), (7, 4097)], "softmax": [(37, 1000)],
    "logsumexp": [(37, 1000)], "prefix_scan": [(37, 1000)], "cross_entropy": [(37, 1000)],
    "swiglu": [(3, 7, 1000)], "geglu": [(3, 7, 1000)], "rope": [(2, 4, 2, 37, 64)],
}
SHAPES = {op: [VL.OPS[op][2]] + small for op, small in SMALL.items()}
SHAPES["cross_entropy"][0] = (4096, 32000)  # the bench shape's 2 GB of logits adds time, not coverage


def _f32(xs: list) -> list:
    return [x.float() if x.is_floating_point() else x for x in xs]


def _grads_close(got: list, ref: list) -> tuple[bool, float]:
    worst = 0.0
    for g, r in zip(got, ref, strict=True):
        g, r = g.float(), r.float()
        scale = r.abs().max().item() or 1.0
        rel_l2 = ((g - r).norm() / (r.norm() + 1e-30)).item()
        worst = max(worst, rel_l2, (g - r).abs().max().item() / scale / 5)
    return worst <= 2e-2, worst


def check(op: str) -> list[dict[str, Any]]:
    example, entry, _, _, has_bwd = VL.OPS[op]
    mod = _load(ROOT / "examples" / example / "stage3.py", f"fastpath_{op}")
    f, eager = getattr(mod, entry), VL.TORCH[op]
    rows = []
    for shape in SHAPES[op]:
        g = torch.Generator(device="cuda").manual_seed(0)
        (a, diff), (b, _) = VL._make(op, shape, g), VL._make(op, shape, g)
        row: dict[str, Any] = {"op": op, "shape": list(shape), "ok": True, "calls": 0}
        with torch.no_grad():
            refs = {id(a): eager(*_f32(a)), id(b): eager(*_f32(b))}
            for s in (a, b, a, b):
                ok, err = VL._close(f(*s), refs[id(s)])
                row["calls"] += 1
                row["fwd_worst"] = max(row.get("fwd_worst", 0.0), err)
                row["ok"] = row["ok"] and ok
        if has_bwd:
            for s in (a, b, a):
                leaves = [t.detach().clone().requires_grad_(i in diff) for i, t in enumerate(s)]
                ref_leaves = [t.detach().float().requires_grad_(i in diff) if t.is_floating_point() else t
                              for i, t in enumerate(s)]
                outs, routs = f(*leaves), eager(*ref_leaves)
                outs = [outs] if isinstance(outs, torch.Tensor) else list(outs)
                routs = [routs] if isinstance(routs, torch.Tensor) else list(routs)
                cots = [torch.randn(o.shape, device="cuda", generator=g).to(o.dtype) for o in outs]
                got = torch.autograd.grad(outs, [leaves[i] for i in diff], cots)
                ref = torch.autograd.grad(routs, [ref_leaves[i] for i in diff], [c.float() for c in cots])
                ok, err = _grads_close(list(got), list(ref))
                row["bwd_worst"] = max(row.get("bwd_worst", 0.0), err)
                row["ok"] = row["ok"] and ok
        torch.cuda.synchronize()
        rows.append(row)
    hits = sum(v.hits for v in vars(mod).values() if isinstance(v, mod._FastLaunch))
    for r in rows:
        r["fastlaunch_hits_op"] = hits
    if hits == 0:
        rows[-1]["ok"] = False
        rows[-1]["why"] = "no launch took the cached path"
    return rows


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "triton": __import__("triton").__version__}
    rows: list[dict[str, Any]] = []
    for op in SHAPES:
        t0 = time.perf_counter()
        try:
            got = check(op)
        except Exception as e:  # noqa: BLE001 - one op failing must not hide the others
            got = [{"op": op, "ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}]
        rows += got
        for r in got:
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {op:14s} {r.get('shape')} fwd {r.get('fwd_worst', '-')!s:.8} "
                  f"bwd {r.get('bwd_worst', '-')!s:.8} hits {r.get('fastlaunch_hits_op')} {r.get('error', '')}"
                  f"{r.get('why', '')} ({time.perf_counter() - t0:.1f} s)", flush=True)
    (OUT / "gpu_fastpath_check.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=2))
    bad = [r for r in rows if not r["ok"]]
    print(f"{env}\n{len(rows) - len(bad)} of {len(rows)} rows ok")
    return 1 if bad else 0


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("gpu_fastpath_check.py runs the gallery on the GPU: no CUDA device here")
    sys.exit(main())
