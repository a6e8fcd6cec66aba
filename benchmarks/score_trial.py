"""Score a fresh assistant's stages on a GPU independently of the tool, then beside its own verdict (issue 29).

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/score_trial.py trials/2026-12-06 [--no-tool]

Per problem folder (KernelBench-form reference.py, stage*.py with ModelNew), at full size, importing nothing of
pytorch_to_triton: KernelBench's criterion (5 seeds, both models built after the same seed, allclose at 1e-2 and at
1e-4, max abs error) and CUDA-event medians (100 runs, L2 flushed) of eager, torch.compile and each stage, within
--budget-s (what it leaves out is listed under "skipped"). Then, unless --no-tool, the tool's own `validate` of every
problem, one process each side by side, within --tool-limit. JSON to $OUT/score_trial.json. Needs a CUDA GPU.
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


class Budget:
    """Seconds left of the whole run, shared out over what is still to do."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.skipped: list[str] = []

    def left(self) -> float:
        """Seconds left (negative once spent)."""
        return self.end - time.monotonic()

    def share(self, parts_left: int) -> float:
        """A fair share of what is left for one of `parts_left` remaining parts."""
        return max(0.0, self.left()) / max(1, parts_left)

    def skip(self, what: str) -> None:
        """Record something the budget left out (printed and kept in the JSON)."""
        self.skipped.append(what)
        print(f"skipped (budget): {what}", flush=True)


def _seed_cases(ref_mod: Any, init: list[Any]) -> list[dict[str, Any]]:
    """Per seed: the inputs and the reference's outputs (built once per problem, shared by every stage)."""
    cases = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        inputs = _to_cuda(list(ref_mod.get_inputs()))
        torch.manual_seed(seed)
        model = ref_mod.Model(*init).cuda()
        with torch.no_grad():
            ref = model(*inputs)
        del model
        cases.append({"seed": seed, "inputs": inputs, "ref": ref})
    torch.cuda.synchronize()
    return cases


def _correct(stage_mod: Any, init: list[Any], cases: list[dict[str, Any]], deadline: float) -> dict[str, Any]:
    """KernelBench's criterion over the seeds; stops early once the verdict cannot change or the stage's share of the
    budget is spent (the seeds left are named)."""
    out: dict[str, Any] = {"seeds": [], "pass_1e-2": True, "pass_1e-4": True}
    for i, c in enumerate(cases):
        if not (out["pass_1e-2"] or out["pass_1e-4"]):
            out["stopped"] = f"seeds {[x['seed'] for x in cases[i:]]} not run: failed both tolerances already"
            break
        if i and time.monotonic() > deadline:
            out["stopped"] = f"seeds {[x['seed'] for x in cases[i:]]} not run: the stage's share of the budget is spent"
            out["complete"] = False
            break
        torch.manual_seed(c["seed"])
        new = stage_mod.ModelNew(*init).cuda()
        with torch.no_grad():
            got = new(*c["inputs"])
        torch.cuda.synchronize()
        ref = c["ref"]
        same_shape = isinstance(got, torch.Tensor) and got.shape == ref.shape
        err = float((got.float() - ref.float()).abs().max()) if same_shape else float("inf")
        ok2 = same_shape and bool(torch.allclose(got.float(), ref.float(), atol=1e-2, rtol=1e-2))
        ok4 = same_shape and bool(torch.allclose(got.float(), ref.float(), atol=1e-4, rtol=1e-4))
        out["seeds"].append({"seed": c["seed"], "max_abs_err": err, "pass_1e-2": ok2, "pass_1e-4": ok4})
        out["pass_1e-2"] &= ok2
        out["pass_1e-4"] &= ok4
        del new, got
    return out


def score_problem(folder: Path, budget: Budget, problems_left: int) -> dict[str, Any]:
    """Correctness and speed of every stage of one problem folder (the torch.compile baseline comes later)."""
    ref_mod = _load(folder / "reference.py", f"ref_{folder.name}")
    init = list(ref_mod.get_init_inputs())
    t0 = time.monotonic()
    cases = _seed_cases(ref_mod, init)
    inputs = cases[0]["inputs"]  # seed 0: the timing inputs too
    torch.manual_seed(0)
    model = ref_mod.Model(*init).cuda().eval()
    res: dict[str, Any] = {"problem": folder.name, "eager": _time(model, inputs), "model": model,
                           "setup_s": round(time.monotonic() - t0, 1)}
    res["stages"] = {}
    stages = sorted(folder.glob("stage*.py"))
    for k, stage in enumerate(stages):
        rec: dict[str, Any] = {}
        t1 = time.monotonic()
        # this problem's share of the independent scoring (the compile baselines and the tool get the rest)
        share = budget.share((len(stages) - k) + (problems_left - 1) * len(stages)) * 0.6
        try:
            mod = _load(stage, f"{folder.name}_{stage.stem}")
            rec["correctness"] = _correct(mod, init, cases, t1 + share)
            torch.manual_seed(0)
            new = mod.ModelNew(*init).cuda().eval()
            runs = 100 if time.monotonic() - t1 < share else 20  # fewer timed runs once the share is spent
            rec["time"] = _time(new, inputs, runs=runs)
            rec["time"]["runs"] = runs
            rec["vs_eager"] = res["eager"]["median_ms"] / rec["time"]["median_ms"]
            del new
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        rec["seconds"] = round(time.monotonic() - t1, 1)
        res["stages"][stage.name] = rec
        print(f"{folder.name}/{stage.name}: {json.dumps(rec)[:400]}", flush=True)
    del cases, inputs
    torch.cuda.empty_cache()
    return res


def compile_baseline(folder: Path, rec: dict[str, Any], budget: Budget, left: int) -> None:
    """torch.compile of the reference, timed; skipped when the budget's share cannot hold a compile."""
    model = rec.pop("model")
    if budget.share(left) < 15:
        budget.skip(f"{folder.name}: torch.compile baseline ({budget.left():.0f} s left)")
        rec["compile"] = {"skipped": "budget"}
        return
    ref_mod = sys.modules[f"ref_{folder.name}"]
    torch.manual_seed(0)
    inputs = _to_cuda(list(ref_mod.get_inputs()))
    try:
        rec["compile"] = _time(torch.compile(model), inputs)
    except Exception as e:  # noqa: BLE001 - the baseline's failure is reported, the stages stand
        rec["compile"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    comp = rec["compile"].get("median_ms")
    for s in rec["stages"].values():
        if comp and s.get("time"):
            s["vs_compile"] = comp / s["time"]["median_ms"]


def tool_verdicts(folders: list[Path], limit_s: float, out: Path) -> list[str]:
    """The tool's `validate --json` of every problem, side by side; one table row per stage (ok, contract cases
    passed, robustness notes, verdict line)."""
    procs = {f.name: subprocess.Popen([sys.executable, "-m", "pytorch_to_triton", "validate", str(f / "reference.py"),
                                       *sorted(str(p) for p in f.glob("stage*.py")), "--json"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in folders}
    rows, end = ["| problem | stage | ok | contract cases | robustness | verdict |", "|---|---|---|---|---|---|"], \
        time.monotonic() + limit_s
    for name, proc in procs.items():
        try:
            text, err = proc.communicate(timeout=max(1.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            text, err = proc.communicate()
            err += f"\nstopped after {limit_s:.0f} s"
        (out / f"tool_{name}.json").write_text(text)
        i = text.find("{")
        try:
            doc = json.JSONDecoder().raw_decode(text[i:])[0] if i >= 0 else {}
        except ValueError:
            doc = {}
        if not doc:
            rows.append(f"| {name} | - | no result (rc {proc.returncode}) | | | {' / '.join(err.strip().splitlines()[-3:])[:200]} |")
        for c in doc.get("candidates", []):
            contract = [k for k in c.get("cases", []) if k.get("tier", "contract") == "contract"]
            rows.append(f"| {name} | {Path(str(c.get('candidate', '?'))).name} | {c.get('ok')} | "
                        f"{sum(1 for k in contract if k.get('ok'))}/{len(contract)} | "
                        f"{len(c.get('robustness') or [])} note(s) | {str(c.get('verdict_line', ''))[:110]} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trial_dir")
    ap.add_argument("--no-tool", action="store_true", help="only the independent KernelBench-style scoring")
    ap.add_argument("--tool-limit", type=float, default=300.0, help="seconds for the tool's validations (together)")
    ap.add_argument("--budget-s", type=float, default=170.0, help="the whole run's time budget (default 170 s)")
    args = ap.parse_args()
    budget = Budget(args.budget_s)
    t_start = time.monotonic()
    if not torch.cuda.is_available():
        print("score_trial.py needs a CUDA GPU", file=sys.stderr)
        return 2
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M"),
               "problems": []}
    folders = sorted(p for p in Path(args.trial_dir).iterdir() if (p / "reference.py").exists())
    for i, folder in enumerate(folders):
        results["problems"].append(score_problem(folder, budget, len(folders) - i))
    for i, (folder, rec) in enumerate(zip(folders, results["problems"])):
        compile_baseline(folder, rec, budget, len(folders) - i)
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    results["tool"] = [] if args.no_tool else tool_verdicts(folders, args.tool_limit, out)
    results["skipped"] = budget.skipped
    results["seconds"] = round(time.monotonic() - t_start, 1)
    (out / "score_trial.json").write_text(json.dumps(results, indent=1))
    for p in results["problems"]:
        for name, s in p["stages"].items():
            c = s.get("correctness", {})
            print(f"| {p['problem']} | {name} | {c.get('pass_1e-2')} | {c.get('pass_1e-4')} | "
                  f"{s.get('time', {}).get('median_ms')} | {s.get('vs_eager')} | {s.get('vs_compile')} | "
                  f"{s.get('seconds')} s |")
    print("\n".join(["", "the tool's own validation:", *results["tool"]]) if results["tool"] else "")
    print(f"total {results['seconds']} s (budget {args.budget_s:.0f} s); skipped: {budget.skipped or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
