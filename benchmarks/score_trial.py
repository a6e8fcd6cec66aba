"""Score a fresh assistant's stages on a GPU, independently of the tool (issue 29's acceptance).

For every problem folder under TRIAL_DIR (reference.py in KernelBench form + stage1.py..stage3.py with ModelNew),
at the problem's own full size, this script imports nothing of pytorch_to_triton:
  correctness  KernelBench's criterion: for 5 seeds, `torch.manual_seed(seed)` before building Model and before
               building ModelNew from get_init_inputs(), inputs from get_inputs() (seeded) moved to the GPU,
               torch.allclose(out, ref, atol, rtol) with KernelBench's 1e-2, and also at 1e-4 (the trial's own
               fp32 tolerance); the max abs error is reported;
  speed        median of CUDA-event timings (100 runs after 10 warm-ups, L2 flushed by a 256 MB write before each
               run, inputs fixed), for eager Model, torch.compile(Model) and each stage; speedups vs both.
Then, unless --no-tool, the tool's own verdict and benchmark through its CLI (`pytorch-to-triton validate` and
`bench`) for the same files, so the two can be compared.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/score_trial.py benchmarks/trials/2026-12-04 [--no-tool]

JSON to $OUT/score_trial.json (default /tmp/out). Needs a CUDA GPU: the figures are GPU figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

SEEDS = (0, 1, 2, 3, 4)


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _to_cuda(xs: list[Any]) -> list[Any]:
    return [x.cuda() if isinstance(x, torch.Tensor) else x for x in xs]


def _time(fn: Any, inputs: list[Any], runs: int = 100, warmup: int = 10) -> dict[str, float]:
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    with torch.no_grad():
        for _ in range(warmup):
            fn(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            flush.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(*inputs)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
    times.sort()
    return {"median_ms": statistics.median(times), "p20_ms": times[len(times) // 5],
            "p80_ms": times[(4 * len(times)) // 5]}


def _correct(ref_mod: Any, stage_mod: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"seeds": [], "pass_1e-2": True, "pass_1e-4": True}
    init = list(ref_mod.get_init_inputs())
    for seed in SEEDS:
        torch.manual_seed(seed)
        inputs = _to_cuda(list(ref_mod.get_inputs()))
        torch.manual_seed(seed)
        model = ref_mod.Model(*init).cuda()
        torch.manual_seed(seed)
        new = stage_mod.ModelNew(*init).cuda()
        with torch.no_grad():
            ref = model(*inputs)
            got = new(*inputs)
        torch.cuda.synchronize()
        same_shape = isinstance(got, torch.Tensor) and got.shape == ref.shape
        err = float((got.float() - ref.float()).abs().max()) if same_shape else float("inf")
        ok2 = same_shape and bool(torch.allclose(got.float(), ref.float(), atol=1e-2, rtol=1e-2))
        ok4 = same_shape and bool(torch.allclose(got.float(), ref.float(), atol=1e-4, rtol=1e-4))
        out["seeds"].append({"seed": seed, "max_abs_err": err, "pass_1e-2": ok2, "pass_1e-4": ok4})
        out["pass_1e-2"] &= ok2
        out["pass_1e-4"] &= ok4
        del model, new, inputs, ref, got
        torch.cuda.empty_cache()
    return out


def score_problem(folder: Path) -> dict[str, Any]:
    """Correctness and speed of every stage of one problem folder."""
    ref_mod = _load(folder / "reference.py", f"ref_{folder.name}")
    init = list(ref_mod.get_init_inputs())
    torch.manual_seed(0)
    inputs = _to_cuda(list(ref_mod.get_inputs()))
    model = ref_mod.Model(*init).cuda().eval()
    res: dict[str, Any] = {"problem": folder.name, "eager": _time(model, inputs)}
    try:
        compiled = torch.compile(model)
        res["compile"] = _time(compiled, inputs)
    except Exception as e:  # noqa: BLE001 - the baseline's failure is reported, the stages still run
        res["compile"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    res["stages"] = {}
    for stage in sorted(folder.glob("stage*.py")):
        rec: dict[str, Any] = {}
        try:
            mod = _load(stage, f"{folder.name}_{stage.stem}")
            rec["correctness"] = _correct(ref_mod, mod)
            torch.manual_seed(0)
            new = mod.ModelNew(*init).cuda().eval()
            rec["time"] = _time(new, inputs)
            eager, comp = res["eager"]["median_ms"], res["compile"].get("median_ms")
            rec["vs_eager"] = eager / rec["time"]["median_ms"]
            rec["vs_compile"] = comp / rec["time"]["median_ms"] if comp else None
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        res["stages"][stage.name] = rec
        print(f"{folder.name}/{stage.name}: {json.dumps(rec)[:400]}", flush=True)
    return res


def tool_verdicts(folder: Path) -> dict[str, Any]:
    """The tool's own validate and bench through its CLI, for the same files."""
    stages = [str(p) for p in sorted(folder.glob("stage*.py"))]
    out: dict[str, Any] = {}
    for op, extra in (("validate", []), ("bench", [])):
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "pytorch_to_triton", op, str(folder / "reference.py"), *stages,
                            "--json", *extra], capture_output=True, text=True, timeout=420)
        out[op] = {"rc": r.returncode, "seconds": round(time.monotonic() - t0, 1), "stdout": r.stdout[-20000:],
                   "stderr": r.stderr[-2000:]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trial_dir")
    ap.add_argument("--no-tool", action="store_true", help="only the independent KernelBench-style scoring")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("score_trial.py needs a CUDA GPU", file=sys.stderr)
        return 2
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M"),
               "problems": []}
    for folder in sorted(p for p in Path(args.trial_dir).iterdir() if (p / "reference.py").exists()):
        rec = score_problem(folder)
        if not args.no_tool:
            rec["tool"] = tool_verdicts(folder)
        results["problems"].append(rec)
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "score_trial.json").write_text(json.dumps(results, indent=1))
    for p in results["problems"]:
        for name, s in p["stages"].items():
            c = s.get("correctness", {})
            print(f"| {p['problem']} | {name} | {c.get('pass_1e-2')} | {c.get('pass_1e-4')} | "
                  f"{s.get('time', {}).get('median_ms')} | {s.get('vs_eager')} | {s.get('vs_compile')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
