"""The checks behind the audit's held-out labels, every pair through one runner (RESULTS.md, audit precision).

  python benchmarks/held_out.py                           # every pair, its checks and what each should give
  python benchmarks/held_out.py 33_34 [CHECK ...]         # run a pair's checks, one process each, then a table
  python benchmarks/held_out.py --pending                 # every check never run on a GPU
  python benchmarks/held_out.py --one 33_34 fa_headdim    # one check in this process (exit = its result)

Each pair's tests/audit_public_harnesses/checks/held_out_NN_MM.py holds small functions that show a labelled problem
on the callers' inputs (rc 1 = it shows, 0 = it does not, 2 = not run here, 124 = timed out), a CHECKS table of what
each should give on a GPU, and GPU_RUN. On a GPU: PART=held_out HELD_OUT="33_34" (gpu_parts/held_out.sh).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
CHECKS_DIR = ROOT / "tests" / "audit_public_harnesses" / "checks"


def pairs() -> list[str]:
    """Every pair with a checks module, e.g. '33_34'."""
    return sorted(p.stem[len("held_out_"):] for p in CHECKS_DIR.glob("held_out_*.py"))


def module(pair: str) -> ModuleType:
    """The pair's checks module (the checks folder first on sys.path, for its _common)."""
    path = CHECKS_DIR / f"held_out_{pair}.py"
    if not path.is_file():
        sys.exit(f"no pair {pair!r}: {CHECKS_DIR} has {', '.join(pairs())}")
    if str(CHECKS_DIR) not in sys.path:
        sys.path.insert(0, str(CHECKS_DIR))
    spec = importlib.util.spec_from_file_location(f"held_out_{pair}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def checks(mod: ModuleType) -> dict:
    """name -> Check (the module's CHECKS table)."""
    return dict(mod.CHECKS)


def pending(mod: ModuleType) -> list[str]:
    """The checks of a pair that never ran on a GPU: its PENDING list, else all of them while GPU_RUN is None."""
    if getattr(mod, "PENDING", None) is not None:
        return list(mod.PENDING)
    return list(checks(mod)) if getattr(mod, "GPU_RUN", None) is None else []


def run_one(pair: str, name: str) -> int:
    """One check in this process: the interpreter switched on first when there is no CUDA (the corpus file's
    @triton.jit reads TRITON_INTERPRET when it is imported)."""
    import torch

    if not torch.cuda.is_available() and os.environ.get("HELD_OUT_INTERPRET", "1") == "1":
        os.environ["TRITON_INTERPRET"] = "1"
    table = checks(module(pair))
    if name not in table:
        sys.exit(f"pair {pair} has no check {name!r}: {', '.join(table)}")
    try:
        return int(table[name].run())
    except Exception as e:  # a crash (a compile error, an illegal address) is the problem showing: named, rc 1
        print(f"{name}: CRASH {type(e).__name__}: {str(e).splitlines()[0][:240] if str(e) else ''}", flush=True)
        return 1


def _command(pair: str, name: str, check) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, **check.env, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "server"), os.environ.get("PYTHONPATH")) if p)}
    env["HELD_OUT_INTERPRET"] = "1" if check.interpret else "0"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", pair, name]
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if check.wrap == "memcheck" and Path(sanitizer).exists():
        cmd = [sanitizer, "--tool", "memcheck", "--print-limit", "4", *cmd]
        env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"  # the caching allocator's blocks hide reads past a tensor
    return cmd, env


def run_pair(pair: str, names: list[str], logs: Path | None) -> list[tuple[str, int, str, str]]:
    """Run the checks, one process each within its limit; (name, rc, expected, evidence) per check."""
    table = checks(module(pair))
    unknown = [n for n in names if n not in table]
    if unknown:
        sys.exit(f"pair {pair} has no check {unknown}: {', '.join(table)}")
    rows = []
    for name in names or list(table):
        check = table[name]
        cmd, env = _command(pair, name, check)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=check.limit_s)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out = 124, f"{e.stdout or ''}{e.stderr or ''}"
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
        if logs is not None:
            (logs / f"held_out_{pair}_{name}.log").write_text(out)
        said = [ln for ln in out.splitlines() if ln.startswith(f"{name}:")]
        summary = re.findall(r"ERROR SUMMARY: \d+ errors?", out)
        evidence = " / ".join(said + summary[-1:]) or (out.strip().splitlines() or ["(no output)"])[-1]
        print(f"{pair} {name}: rc={rc} ({time.monotonic() - t0:.0f} s) {evidence[:300]}", flush=True)
        rows.append((name, rc, check.expect, evidence))
    return rows


def main(argv: list[str] | None = None) -> int:
    """List the pairs, or run checks and print their table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pair", nargs="?", help="e.g. 33_34")
    ap.add_argument("checks", nargs="*", help="some of its checks (default: all)")
    ap.add_argument("--one", action="store_true", help="run one check in this process")
    ap.add_argument("--pending", action="store_true", help="every pair whose checks never ran on a GPU")
    ap.add_argument("--logs", type=Path, help="write each check's output to DIR/held_out_PAIR_CHECK.log")
    args = ap.parse_args(argv)
    if args.one:
        return run_one(args.pair, args.checks[0])
    todo = {args.pair: args.checks} if args.pair else {p: pending(module(p)) for p in pairs()} if args.pending else {}
    todo = {p: names for p, names in todo.items() if names or args.pair}
    if not todo:
        for p in pairs():
            mod = module(p)
            print(f"{p} (last GPU run: {getattr(mod, 'GPU_RUN', None) or 'never'})")
            never = pending(mod)
            for name, check in checks(mod).items():
                print(f"  {name:<26} {'(never on a GPU) ' if name in never else ''}{check.expect}")
        return 0
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    table = []
    for p, names in todo.items():
        table += [(p, *row) for row in run_pair(p, names, args.logs)]
    print("| pair | check | rc | expected on a GPU | evidence |\n|---|---|---|---|---|")
    for p, name, rc, expect, evidence in table:
        print(f"| {p} | {name} | {rc} | {expect} | {evidence[:300].replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
