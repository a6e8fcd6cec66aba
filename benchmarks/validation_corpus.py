"""Run the validation corpus (tests/validation_corpus) through Service.validate and write a JSON summary.

    python benchmarks/validation_corpus.py --out corpus.json [--trials 2] [--only softmax,row_mean]

Every buggy kernel must fail with its labelled check and every correct one must pass (labels.json;
semantics in tests/validation_corpus/harness.py). On a GPU the gpu_only entries (a race between programs,
a side stream) run as well. The file is rewritten after every kernel, so a run cut short still leaves
what it measured. Exit status 0 only at a 100% catch rate with no false failure.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.service import Service  # noqa: E402

_spec = importlib.util.spec_from_file_location("validation_corpus_harness", ROOT / "tests/validation_corpus/harness.py")
harness = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = harness
_spec.loader.exec_module(harness)


def _has_cuda() -> bool:
    return Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    tmp.replace(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write the JSON summary")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated task names (elementwise,softmax,row_mean,...)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-kernel validation timeout (s)")
    args = ap.parse_args()
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    labels = harness.load_labels()
    only = [t for t in args.only.split(",") if t]
    keys = [k for k in labels if not only or harness.task_of(k) in only]
    has_cuda = _has_cuda()
    data: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "corpus": str(harness.CORPUS.relative_to(ROOT)),
                  "trials": args.trials, "seed": args.seed, "has_cuda": has_cuda, "complete": False}
    t0 = time.perf_counter()
    outcomes = []
    svc = Service(ROOT)
    try:
        for key in keys:
            t1 = time.perf_counter()
            try:
                o = harness.run_one(svc, key, labels[key], has_cuda=has_cuda, trials=args.trials, seed=args.seed)
            except Exception as e:  # noqa: BLE001 - a usage error on one entry must not lose the others
                o = harness.Outcome(key, labels[key], ok=None, fail_checks=["harness_error"],
                                    summary=f"{type(e).__name__}: {e}")
            outcomes.append(o)
            if o.runtime and "runtime" not in data:
                rt = o.runtime
                data.update(interpreter=o.interpreter, device=rt.get("worker_device") or rt.get("device"),
                            torch=rt.get("torch"), triton=rt.get("triton"), gpu=rt.get("gpu"),
                            cuda=rt.get("cuda"), python=rt.get("python"), runtime=rt)
            print(f"{o.verdict:13s} {key:45s} {','.join(o.fail_checks) or '-':40s} "
                  f"{time.perf_counter() - t1:6.1f}s", flush=True)
            data.update(harness.score(outcomes), kernels=[x.as_dict() for x in outcomes],
                        elapsed_s=round(time.perf_counter() - t0, 1))
            _write(out_path, data)
    finally:
        svc.close()
    data["complete"] = len(outcomes) == len(keys)
    _write(out_path, data)
    s = harness.score(outcomes)
    print(f"caught {s['caught']}/{s['buggy_total']} buggy kernels, false failures "
          f"{len(s['false_failures'])}/{s['correct_total']}, skipped {len(s['skipped'])}, "
          f"interpreter={data.get('interpreter')}, {data['elapsed_s']}s -> {out_path}")
    return 0 if s["catch_rate"] == 1.0 and not s["false_failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
