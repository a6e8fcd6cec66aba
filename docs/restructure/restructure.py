#!/usr/bin/env python3
"""Issue 39's restructure, re-runnable: worker/ split into subpackages by role, benchmarks/ apart from exploration.

Run from the root of a pytorch-to-triton checkout (after the other branches have merged):

    python3 docs/restructure/restructure.py            # apply (git mv + rewrites), then a self-check
    python3 docs/restructure/restructure.py --dry-run  # print the plan, change nothing

then docs/restructure/split.py splits the long files of the rooms (see its docstring).

What it does, in order:
1. refuses (exit 2, with a list) when worker/ holds a .py file the table below does not map, or a file the
   benchmark steps expect has changed since the tool was written (its new text would overwrite that change);
2. rewrites every import of a moved module in server/, tests/, benchmarks/, examples/ (relative `from .x import`,
   `from . import a, b` regrouped per new package, absolute `pytorch_to_triton.worker.x` in code and strings,
   `-m pytorch_to_triton.worker.x` command lines, patch targets), and the `Path(__file__)` ancestors of moved files;
3. `git mv`s the files, writes each subpackage's __init__.py (what it owns, what it may import);
4. pyproject.toml's package list; path mentions (`worker/x.py`, `benchmarks/explore_x.py`) in every tracked text
   file except recorded results and verbatim corpora; README's "Where things are" section, from the tree;
5. benchmarks/: exploration scripts to benchmarks/explore/ (one README line each), per-issue GPU scripts to parts
   of benchmarks/gpu_session.sh (benchmarks/gpu_parts/), the parts that ran them updated;
6. `ruff check --fix --select I` on the files it touched (import order), then a self-check: every import of
   server/ resolves to a file, the subpackages import only what their table row allows, no old name is left.

Idempotent: on an already-restructured tree it changes nothing and the self-check passes (exit 0).
Exit codes: 0 done (or nothing to do), 2 refused before any change, 3 the self-check failed after the change.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PKG = "pytorch_to_triton"
WORKER_PKG = f"{PKG}.worker"
WORKER = Path("server/pytorch_to_triton/worker")

# ---- the worker's rooms ---------------------------------------------------------------------------------------
# Floors, bottom up: device, confine < validation < benchmark, probe < the top (__main__, prewarm).
# "may" = the subpackages of worker/ this one may import (besides itself); every room may import the server's
# torch-free helpers (pytorch_to_triton.protocol, value_recipes). Nothing may import the top.
SUBPACKAGES: dict[str, dict] = {
    "device": {
        "may": [],
        "doc": """Where kernels run: the device choice (CUDA, or Triton's CPU interpreter), the Triton import and the
launch recorder (runtime.py), a GPU's first CUDA set-up (gpu_first.py), the prewarm's kernel, and the
interpreter's fixes and instruments: TF32 dots, libdevice, autotune, NumPy compatibility, progress, traffic
counts, and the hints that explain interpreter-only errors; each launch's specialisation (launch_specs.py), its
compile for the target GPU without one (target_compile.py and its child process) and the compiled kernel's facts
(compiled.py: registers, spills, occupancy, PTX shape).

May import: nothing else of the worker (the bottom floor, beside confine/). Everything above imports it.""",
    },
    "confine": {
        "may": [],
        "doc": """Confinement: the worker's Landlock ruleset and limits (sandbox.py), the reference module sealed
before any candidate code runs (refseal.py), the compilers the ruleset lets run (toolchain.py), and the watch that tells whether a candidate ran the reference's
code (refwatch.py).

May import: nothing else of the worker (the bottom floor, beside device/).""",
    },
    "validation": {
        "may": ["device", "confine"],
        "doc": """run_validation and what every tool shares with it: loading the reference and candidate (tasks.py,
loader.py, code and kernel caches), the cases and their tiers (cases.py, sizes.py: the one home of invented
inputs), the Validator (validate.py; its output checks in output_checks.py, its gradients in gradients.py) and
KernelBench's form (kernelbench.py, kb_criterion.py), the comparison (compare.py), poisoned memory, the honesty guards, composition, memory, the reference's cache, per-case events,
error formatting and first fixes, and the verdict (run_validation.py).

May import: device/, confine/. Imported by benchmark/, probe/ and the top (__main__, prewarm).""",
    },
    "benchmark": {
        "may": ["validation", "device"],
        "doc": """run_benchmark: timing on a GPU (bench.py), this device's environment, measured peaks and the flags of
an implausible timing (peaks.py), roofline figures (roofline.py, the sidecar's formulas in formulas.py), the
no-GPU ESTIMATE (estimate.py), and audit's compiled analysis (bench.compiled_analysis).

May import: validation/, device/. Imported by the top only.""",
    },
    "probe": {
        "may": ["validation", "device", "confine"],
        "doc": """audit_kernel's dynamic confirmation (worker op "probe", `python -m pytorch_to_triton.worker.probe.probes`):
the Prober and the op (probes.py) with its probe families as mixins (shape_probes.py: layouts, rows, sizes;
value_probes.py: sentinels, magnitudes, dtypes, defaults, the reference; grad_probes.py: an autograd Function's
backward), what one call did and how it is judged (outcome.py), the audited entry (entry.py), the inputs they
invent (probe_inputs.py), KernelBench-form harnesses (probe_kb.py), the host lines the example ran
(probe_lines.py), the interpreter's bounds check (bounds.py) and compute-sanitizer over the probe's launches on a
GPU (sanitizer.py).

May import: validation/, device/, confine/. Imported by the top only.""",
    },
}

TOP = {"__init__", "__main__", "prewarm"}  # the process's own entry and start-up stay at worker/

MAPPING: dict[str, str] = {
    # device/
    "runtime": "device", "gpu_first": "device", "prewarm_kernel": "device",
    "interp_autotune": "device", "interp_compat": "device", "interp_hints": "device", "interp_libdevice": "device",
    "interp_progress": "device", "interp_tf32": "device", "interp_traffic": "device",
    # confine/
    "sandbox": "confine", "refseal": "confine", "refwatch": "confine",
    # validation/
    "tasks": "validation", "code_cache": "validation", "kernel_reuse": "validation", "loader": "validation",
    "nest": "validation", "compare": "validation", "poison": "validation", "guards": "validation",
    "composition": "validation", "errors_fmt": "validation", "case_log": "validation", "memory": "validation",
    "ref_cache": "validation", "cases": "validation", "sizes": "validation", "validate": "validation",
    "kernelbench": "validation", "kb_criterion": "validation", "first_fix": "validation",
    "run_validation": "validation",
    # benchmark/
    "budget": "validation", "launch_specs": "device", "target_compile": "device", "target_compile_child": "device",
    "sanitizer": "probe", "toolchain": "confine", "bench": "benchmark", "estimate": "benchmark", "roofline": "benchmark", "compiled": "device",
    "formulas": "benchmark",
    # probe/
    "probes": "probe", "probe_inputs": "probe", "probe_kb": "probe", "probe_lines": "probe", "bounds": "probe",
    # the files docs/restructure/split.py makes out of probes.py, bench.py and validate.py (in their room already)
    "outcome": "probe", "entry": "probe", "shape_probes": "probe", "value_probes": "probe", "grad_probes": "probe",
    "peaks": "benchmark", "output_checks": "validation", "gradients": "validation",
}

SPLIT_MADE = {"outcome", "entry", "shape_probes", "value_probes", "grad_probes", "peaks", "output_checks", "gradients"}

TOP_DOC = """The worker process: the only place that imports torch, triton or user code (see protocol.py).

Rooms, bottom up (each subpackage's __init__ says what it owns and what it may import):
- device/      where kernels run: device choice, Triton import, launch recorder, the CPU interpreter's fixes
- confine/     the Landlock sandbox, the sealed reference, the reference-call watch
- validation/  run_validation and what every tool shares with it: tasks, cases, the Validator, guards, compare
- benchmark/   run_benchmark: timing, this device's peaks, roofline figures, the no-GPU estimate
- probe/       audit_kernel's probes
- __main__.py (the entry: the request loop and its dispatch) and prewarm.py (start-up work) import them all;
  nothing imports them. Imports run one way: top -> benchmark, probe -> validation -> device, confine."""

# ---- benchmarks/ ---------------------------------------------------------------------------------------------
EXPLORE = {  # script -> its README line: what it found (the numbers and their context are in RESULTS.md)
    "explore_attention.py": "flash attention stage 3's forward variants against SDPA (cuDNN), each checked "
                            "before it is timed (issues 20, 28): the per-(causal, D) configs stage 3 keeps; round 3's "
                            "FA3-style variants were all slower than stage 3 (0.72-0.93x of SDPA).",
    "explore_flce.py": "fused linear + cross-entropy stage 3's tile and chunk variants beside Liger-Kernel and "
                       "torch.compile at 8192x4096x128256 and 4096x4096x32000 (issue 20): the 128x256x64 tiles, 8 "
                       "warps, 3 stages stage 3 keeps.",
    "explore_glu_rope.py": "kernel and host-time variants of swiglu, geglu and rope stage 3 side by side on the "
                           "H200 (issue 20; results/explore_glu_rope_2026-12-04_0135.json).",
    "explore_host.py": "host time per call idle and behind a busy GPU (issue 20): found that `_FastLaunch` never "
                       "engaged on Triton 3.6 (an empty HookChain read as a hook), RESULTS.md \"Correction\".",
    "explore_norms.py": "rmsnorm, layernorm and softmax stage 3 configs side by side with registers, spills and "
                        "occupancy (issue 20): the configs those examples keep (their READMEs).",
    "explore_reductions.py": "logsumexp, prefix scan and cross-entropy kernel variants: rows per program, warps, "
                             "persistent grids, eviction hints (issue 20; those examples' READMEs).",
    "host_overhead.py": "where a gallery wrapper's host time goes (issue 20): a JITFunction launch 17.1 us against "
                        "5.3 us for the compiled kernel's launcher, which led to `_FastLaunch`.",
    "gpu_fastpath_check.py": "the cached launch path of every memory-bound stage 3 on the GPU, bench and odd "
                             "shapes, two alternating input sets, against eager: 20 of 20 rows ok (issue 20).",
    "timing_check.py": "issue 5's timing honesty: the tool's median within 0.46 % of an independent CUDA-event "
                       "loop, 0.03 % run to run, the measured peaks (PART=bench runs it).",
    "worker_gap.py": "the warm validate in the worker subprocess vs in-process (issue 28: 132.5 vs 64.9 ms on the "
                     "H200; on the CPU the two cost the same).",
    "sidecar_gpu.py": "the task sidecar and `new` on a GPU (issue 18 items 1, 5): what the CPU tests cannot reach.",
    "fp8_e4nv_cast.py": "float32 -> float8e4nv of 16 values on the GPU's Triton, torch and the patched interpreter "
                        "(issue 35, `gpu_parts/inplace_fp8.sh`): Triton 3.9's interpreter lost the carry into the "
                        "exponent (0.4914 -> 0.25, 500 -> 256); interp_compat.install_fp8_rounding rounds as the GPU.",
}
RENAMED = {"gpu_issue25.py": "gpu_tiers.py"}  # issue-named scripts that reproduce a published figure
# Per-issue GPU scripts -> parts of gpu_session.sh. Each old script's blob hash is what this tool was written
# against: a script changed since then is refused (its new part would drop that change): port it by hand.
GPU_SCRIPTS = {  # blob hashes at main 3a40f11 (`git hash-object benchmarks/<name>`)
    "gpu_accept.sh": "d4cc6cb31930d95d43a9c778ea82a5715c6fc6a1",
    "gpu_bench.sh": "7d29e8a1827c1215f75496a8009e6528d5eaa6c2",
    "gpu_containment.sh": "fcd099e89f8d92a2360fec0180e7a8d03397c2d5",
    "gpu_faults.sh": "e6f8ae45807b793e697204518134c611906bd25b",
    "gpu_issue20.sh": "f25eae34db6e81bc2b69016d02cf3ea3a4415646",  # its PARTs -> explore, fastpath, stage3, liger
    "gpu_issue28.sh": "2c4d973e2c72b3a90c3f6abde309b2ed103db165",  # what PART=perf already runs
}

PART_HEAD = "# PART={name}: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).\n# {what}\n"
PARTS = {
    "accept.sh": ("the acceptance of issues 25, 26, 29 and 30 (2026-12-04, two calls of < 9 minutes):\n"
                  "#   ACCEPT=a  issue 25: the tiers' fixtures at full size (gpu_tiers.py), the KernelBench-form corpus\n"
                  "#             verdicts against their labels (gpu_suite.py --no-bench); issue 26: audit probes on held-out files\n"
                  "#   ACCEPT=b  issue 25 items 3-4: containment (PART=containment); issue 30: sandbox cost and the hostile\n"
                  "#             corpus on the GPU (sandbox_cost.py); issue 29: the no-GPU estimate against GPU medians",
                  """case "${ACCEPT:-a}" in
  a)
    # The sandbox has never run on this machine: if it breaks CUDA here, say so and go on without it
    timeout 90 python3 -m pytorch_to_triton validate examples/softmax/reference.py examples/softmax/stage1.py --json \\
      > "$OUT/x/sandbox_smoke.log" 2>&1; rc=$?; echo "sandbox smoke rc=$rc"; stamp sandbox_smoke
    grep -o '"summary": "[^"]*' "$OUT/x/sandbox_smoke.log" | head -1 | cut -c1-300
    grep -o "\\"sandbox\\": \\"[^\\"]*\\"" "$OUT/x/sandbox_smoke.log" | head -2
    [ $rc -eq 0 ] || { export P2T_SANDBOX=0; echo "SANDBOX OFF for the rest of this part"; }
    run tiers 130 python3 benchmarks/gpu_tiers.py
    run gpu_suite 220 python3 benchmarks/gpu_suite.py --no-bench --budget 180 --redo
    run audit_probes 90 python3 benchmarks/audit_probe_precision.py --only held_out --check-repro ;;
  b)
    CONTAIN_S=120 FAULT_S=100 LAT_S=45 source benchmarks/gpu_parts/containment.sh
    run sandbox_cost 180 python3 benchmarks/sandbox_cost.py --pings 100 --calls 5 --rounds 2
    run estimate_vs_gpu 75 python3 benchmarks/estimate_vs_gpu.py ;;
esac
"""),
    "containment.sh": ("issue 25 items 3-4, issue 29 item 3 (~4 minutes): a device-side assert in a candidate's\n"
                       "# case and in a reference's case is contained (GPU tests, fault-suite entries with the follow-up call's\n"
                       "# result), Triton's share of the GPU time, the warm validate latency with per-case events.",
                       """run containment_pytest "${CONTAIN_S:-150}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu \\
    tests/test_containment.py tests/test_composition.py
run faults "${FAULT_S:-120}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --only \\
    crash_in_one_case,reference_crash_in_one_case,device_assert_in_one_case,reference_device_assert,device_assert,os_exit
sed -n '/^|/p;/next call failed/p' "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-260 | head -30
run latency "${LAT_S:-60}" python3 benchmarks/latency.py --calls 10 --layer bare --out "$OUT/x/latency.json"
"""),
    "faults.sh": ("correctness, no speed figure (~8 minutes with its defaults: lower the *_S limits for a shorter\n"
                  "# call): the fault suite alone (its recovery times shared with nothing), tests/test_gpu.py, the\n"
                  "# containment tests, then compiled analysis and the examples' validation side by side.",
                  """run fault_suite "${FAULT_S:-230}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults"
sed -n '/^|/p' "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-230 | head -60
grep -A1 "next call failed" "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-400 | head -20
run pytest_gpu "${PYTEST_S:-110}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 100 tests/test_gpu.py
run containment_pytest "${CONTAIN_S:-150}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu \\
    tests/test_containment.py tests/test_composition.py
( timeout "${COMPILED_S:-170}" python3 benchmarks/compiled_audit.py --stages stage3 --out "$OUT/x/compiled.json" \\
    > "$OUT/x/compiled.log" 2>&1; echo "compiled rc=$?" >> "$OUT/x/compiled.log" ) &
( timeout "${VALID_S:-170}" python3 benchmarks/run_examples.py --no-bench \\
    --only softmax,layernorm,rmsnorm,vector_add,logsumexp,prefix_scan,matmul,cross_entropy,flash_attention \\
    --out "$OUT/x/examples_validation.json" > "$OUT/x/examples_validation.log" 2>&1; echo "rc=$?" >> "$OUT/x/examples_validation.log" ) &
wait; stamp compiled_and_validation
cut -c1-260 "$OUT/x/compiled.log"
cut -c1-400 "$OUT/x/examples_validation.log" | grep -v "^\\s*$" | tail -30
"""),
    "bench.sh": ("every timing alone on the GPU, one after the other (RESULTS.md, issues 5 and 13;\n"
                 "# ~10 minutes with its defaults: ONLY=softmax,rmsnorm picks examples, the *_S variables are the limits).",
                 """rm -f .pytorch-to-triton/peaks.json  # measured afresh in this run
run timing_check "${TIMING_S:-110}" python3 benchmarks/explore/timing_check.py --out "$OUT/x/timing.json"
python3 - "$OUT/x/timing.json" <<'PY' 2>&1 | cut -c1-400
import json, sys
d = json.load(open(sys.argv[1]))
print("vadd", {k: v for k, v in d["vadd"].items() if k not in ("environment",)})
for t in d["softmax"]:
    print("softmax", t["impl"], t["median_ms"], t["p20_ms"], t["p80_ms"], t["spread_pct"], t["gbps"], t["pct_peak_bw"], t.get("suspect"))
print("cuda_graph", d["cuda_graph"])
print("sweep", d["sweep"]["rows"])
PY
cp .pytorch-to-triton/peaks.json "$OUT/x/" 2>/dev/null; head -c 600 .pytorch-to-triton/peaks.json 2>/dev/null; echo
run examples_bench "${BENCH_S:-420}" python3 benchmarks/run_examples.py --no-validate --repeats 2 \\
    --only "${ONLY:-softmax,matmul,flash_attention,layernorm,rmsnorm,cross_entropy,vector_add,logsumexp,prefix_scan}" \\
    --out "$OUT/x/examples_bench.json"
python3 benchmarks/show_bench.py "$OUT/x/examples_bench.json" 2>&1 | cut -c1-300
"""),
    "explore.sh": ("issue 20's exploration scripts (benchmarks/explore/), EXPLORE=\"norms glu_rope ...\" picks\n"
                   "# them (default: attention flce norms glu_rope reductions host), LIMIT seconds each (200).",
                   """for e in ${EXPLORE:-attention flce norms glu_rope reductions host}; do
  run "explore_$e" "${LIMIT:-200}" python3 "benchmarks/explore/explore_$e.py"
done
"""),
    "fastpath.sh": ("issue 20's cached launch path on the GPU (~7 minutes): every memory-bound stage 3\n"
                    "# through _FastLaunch, the GPU tests of that session, latency and host overhead.",
                    """run fastpath_check 200 python3 benchmarks/explore/gpu_fastpath_check.py
run gpu_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py tests/test_refwatch.py \\
    tests/test_memory.py -k "fastlaunch or cached or hooked or watch or cuda_bytes"
run latency "${LAT_S:-150}" python3 benchmarks/latency.py --calls 10
run host_overhead 60 python3 benchmarks/explore/host_overhead.py
"""),
    "liger.sh": ("issue 20's acceptance table (~9 minutes): gallery stage 3 vs Liger-Kernel, eager and\n"
                 "# torch.compile (vs_liger.py; VS_ONLY=rope,rmsnorm for a subset), the cached-launch tests, host overhead.",
                 """run fastlaunch_test 60 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py
run vs_liger "${VS_S:-420}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-360}" ${VS_ONLY:+--only "$VS_ONLY"}
run host_overhead 60 python3 benchmarks/explore/host_overhead.py
"""),
    "stage3.sh": ("the gallery's stage 3 on the GPU (issue 20, ~9 minutes): attention against SDPA (its own\n"
                  "# script times SDPA beside stage 3), the tools' latency, every stage 3 validated on the GPU.",
                  """run explore_attention "${ATT_S:-200}" python3 benchmarks/explore/explore_attention.py
run latency "${LAT_S:-130}" python3 benchmarks/latency.py --calls 10
run validate_stage3 "${VAL_S:-240}" python3 benchmarks/run_examples.py --no-bench --stages stage3.py --trials 1 \\
    --only "${ONLY:-cross_entropy,rmsnorm,layernorm,softmax,swiglu,geglu,rope,logsumexp,prefix_scan,fused_linear_cross_entropy,flash_attention}" \\
    --out "$OUT/x/validate_stage3.json"
"""),
}
# Parts that stand and only name moved scripts: their mentions are rewritten like every other text file.
# Old GPU commands -> the part that runs them now (for RESULTS.md, READMEs and comments).
_G = r"(?:bash )?(?:benchmarks/)?"
COMMANDS = [
    (_G + r"gpu_issue20\.sh,? ?\(?PART=(?:explore|host)\)?", "PART=explore bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_issue20\.sh,? ?\(?PART=check\)?", "PART=fastpath bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_issue20\.sh,? ?\(?PART=final1\)?", "PART=stage3 bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_issue20\.sh,? ?\(?PART=final[23]\)?", "PART=liger bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_issue20\.sh", "PART=explore bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_issue28\.sh", "PART=perf bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_accept\.sh", "PART=accept bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_containment\.sh", "PART=containment bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_faults\.sh", "PART=faults bash benchmarks/gpu_session.sh"),
    (_G + r"gpu_bench\.sh", "PART=bench bash benchmarks/gpu_session.sh"),
]

# Text files whose content is a record or verbatim third-party code: never rewritten.
# docs/restructure/ is this tool itself and its notes: they name the old places on purpose.
FROZEN = ("benchmarks/results/", "benchmarks/trials/", "tests/audit_public_corpus/", "docs/.triton_docs/",
          "docs/ASSISTANT_TRANSCRIPT.md", "docs/restructure/")
TEXT_EXT = {".py", ".md", ".sh", ".toml", ".txt", ".cfg", ".yml", ".yaml", ".json", ""}
CODE_DIRS = ("server/", "tests/", "benchmarks/", "examples/")


class Refused(Exception):
    pass


def log(msg: str) -> None:
    print(msg, flush=True)


def git(*args: str, check: bool = True) -> str:
    r = subprocess.run(["git", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def blob_hash(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def tracked_files() -> list[str]:
    out = git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.split("\0") if p and Path(p).is_file()})


# ---- the plan ---------------------------------------------------------------------------------------------------
def worker_moves() -> dict[str, str]:
    """old module (dotted) -> new module (dotted), for every mapped file (moved or not yet)."""
    return {f"{WORKER_PKG}.{m}": f"{WORKER_PKG}.{s}.{m}" for m, s in MAPPING.items()}


def check_worker_inventory() -> tuple[list[tuple[Path, Path]], list[str]]:
    """(moves still to make, problems). A problem refuses the whole run."""
    problems, moves = [], []
    if not WORKER.is_dir():
        return [], [f"{WORKER} not found: run from the repository root"]
    for p in sorted(WORKER.iterdir()):
        if p.name == "__pycache__":
            continue
        if p.is_dir():
            if p.name not in SUBPACKAGES:
                problems.append(f"{p}/: a folder the table does not know (add it to SUBPACKAGES)")
                continue
            for q in sorted(p.iterdir()):
                if q.suffix == ".py" and q.stem != "__init__" and MAPPING.get(q.stem) != p.name:
                    problems.append(f"{q}: not in the table (MAPPING) for {p.name}/: add it")
                elif q.is_dir() and q.name != "__pycache__":
                    problems.append(f"{q}/: a folder inside a subpackage: give it a home in the table")
            continue
        if p.suffix != ".py":
            if p.name not in ("py.typed",):
                problems.append(f"{p}: not a .py file: give it a home in the table")
            continue
        if p.stem in TOP:
            continue
        sub = MAPPING.get(p.stem)
        if sub is None:
            problems.append(f"{p}: not in the table (MAPPING): give it a subpackage (or TOP) and run again")
            continue
        dest = WORKER / sub / p.name
        if dest.exists():
            problems.append(f"{p} and {dest} both exist: merge them by hand")
            continue
        moves.append((p, dest))
    for name in MAPPING:
        if name in SPLIT_MADE:
            continue  # made by split.py after this tool has run
        if not (WORKER / f"{name}.py").exists() and not (WORKER / MAPPING[name] / f"{name}.py").exists():
            log(f"note: {name}.py is in the table but in no place of worker/ (removed on a branch?): skipped")
    return moves, problems


def bench_plan() -> tuple[list[tuple[Path, Path]], list[str], list[str]]:
    """(moves, scripts to remove, problems)."""
    b = Path("benchmarks")
    moves, remove, problems = [], [], []
    for name in EXPLORE:
        src, dst = b / name, b / "explore" / name
        if src.exists() and dst.exists():
            problems.append(f"{src} and {dst} both exist")
        elif src.exists():
            moves.append((src, dst))
    for old, new in RENAMED.items():
        if (b / old).exists() and (b / new).exists():
            problems.append(f"{b / old} and {b / new} both exist")
        elif (b / old).exists():
            moves.append((b / old, b / new))
    for name, want in GPU_SCRIPTS.items():
        p = b / name
        if not p.exists():
            continue
        have = blob_hash(p)
        if have != want:
            problems.append(f"{p} changed since this tool was written (blob {have[:10]}, expected {want[:10]}): "
                            "port the change into PARTS by hand, then put its new hash in GPU_SCRIPTS")
        remove.append(name)
    stray = sorted(p.name for p in b.glob("gpu_issue*") if p.name not in GPU_SCRIPTS and p.name not in RENAMED)
    stray += sorted(p.name for p in b.glob("explore_*.py") if p.name not in EXPLORE)
    for s in stray:
        problems.append(f"benchmarks/{s}: an exploration or per-issue script the table does not know: add it to "
                        "EXPLORE, RENAMED or GPU_SCRIPTS/PARTS")
    return moves, remove, problems



# ---- import rewriting ----------------------------------------------------------------------------------------
def module_of(path: Path) -> tuple[str, bool] | None:
    """(dotted module, is_package) of a file under server/, else None."""
    try:
        rel = path.relative_to("server")
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def package_of(path: Path) -> str | None:
    mod = module_of(path)
    if mod is None:
        return None
    name, is_pkg = mod
    return name if is_pkg else name.rsplit(".", 1)[0]


def resolve(pkg: str, level: int, module: str | None) -> str:
    parts = pkg.split(".")
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def relative(from_pkg: str, target: str) -> tuple[int, str]:
    """(level, module) of `from <dots><module> import` that names target from inside from_pkg."""
    a, b = from_pkg.split("."), target.split(".")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return len(a) - common + 1, ".".join(b[common:])


def fmt_import(level: int, module: str, names: list[ast.alias], indent: str) -> str:
    items = [a.name + (f" as {a.asname}" if a.asname else "") for a in names]
    head = f"from {'.' * level}{module} import "
    one = indent + head + ", ".join(items)
    if len(one) <= 120:
        return one
    lines, cur = [indent + head + "("], indent + "    "
    for it in items:
        if len(cur) + len(it) + 2 > 120 and cur.strip():
            lines.append(cur.rstrip())
            cur = indent + "    "
        cur += it + ", "
    lines.append(cur.rstrip().rstrip(","))
    lines.append(indent + ")")
    return "\n".join(lines)


def rewrite_imports(text: str, old_pkg: str | None, new_pkg: str | None, moves: dict[str, str]) -> str:
    """Rewrite every `from ... import` that names a moved module (old_pkg/new_pkg: the file's package before and
    after its own move; None outside server/, where only absolute imports are rewritten)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level and old_pkg is None:
            continue
        base = resolve(old_pkg, node.level, node.module) if node.level else (node.module or "")
        if not (base == WORKER_PKG or base.startswith(WORKER_PKG + ".") or base == PKG or
                (node.level and old_pkg != new_pkg)):
            continue
        groups: dict[str, list[ast.alias]] = {}
        if base in moves:
            groups.setdefault(moves[base], []).extend(node.names)
        else:
            for a in node.names:
                full = f"{base}.{a.name}"
                groups.setdefault(moves[full].rsplit(".", 1)[0] if full in moves else base, []).append(a)
        if list(groups) == [base] and (not node.level or old_pkg == new_pkg):
            continue
        first = lines[node.lineno - 1]
        indent = first[: node.col_offset]
        prefix_is_code = indent.strip() != ""
        stmts = []
        for target, names in groups.items():
            if node.level:
                lvl, mod = relative(new_pkg, target)
            else:
                lvl, mod = 0, target
            stmts.append(fmt_import(lvl, mod, names, "" if prefix_is_code else indent))
        tail = lines[node.end_lineno - 1][node.end_col_offset:]
        noqa = re.search(r"#\s*noqa(?::\s*[A-Z0-9, ]+[0-9])?", tail)
        if noqa and len(stmts) > 1 and not prefix_is_code:  # each statement keeps the waiver the one line had
            stmts = [st + "  " + noqa.group(0) for st in stmts[:-1]] + stmts[-1:]
        new = ("; ".join(s.strip() for s in stmts) if prefix_is_code
               else ("\n").join(stmts)[len(indent):])
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        edits.append((start, end, new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


DOTTED = re.compile(re.escape(WORKER_PKG) + r"\.(\w+)")


FROM_WORKER = re.compile(r"from " + re.escape(WORKER_PKG) + r" import (\w+(?: as \w+)?(?:, \w+(?: as \w+)?)*)")


def _from_worker(m: re.Match) -> str:
    """`from pytorch_to_triton.worker import a, b` left in a string (code run by `python -c`): one per room."""
    groups: dict[str, list[str]] = {}
    for item in m.group(1).split(", "):
        name = item.split(" as ")[0]
        groups.setdefault(f"{WORKER_PKG}.{MAPPING[name]}" if name in MAPPING else WORKER_PKG, []).append(item)
    return "; ".join(f"from {pkg} import {', '.join(items)}" for pkg, items in groups.items())


def rewrite_dotted(text: str) -> str:
    """pytorch_to_triton.worker.x -> pytorch_to_triton.worker.<room>.x in code, strings, comments and docs."""
    text = FROM_WORKER.sub(_from_worker, text)
    return DOTTED.sub(lambda m: f"{WORKER_PKG}.{MAPPING[m.group(1)]}.{m.group(1)}" if m.group(1) in MAPPING
                      else m.group(0), text)


def path_rewriter() -> list[tuple[re.Pattern, object]]:
    """Path mentions of moved files: worker/x.py, benchmarks/x.py, and Path joins ("worker" / "x.py")."""
    subs: list[tuple[re.Pattern, object]] = []
    worker_names = "|".join(sorted(MAPPING, key=len, reverse=True))
    bench = {**{n: f"explore/{n}" for n in EXPLORE}, **RENAMED}
    bench_names = "|".join(re.escape(n) for n in sorted(bench, key=len, reverse=True))

    def keep_column(m: re.Match, new: str) -> str:
        grow, spaces = len(new) - len(m.group("path")), m.group("sp") or ""
        if len(spaces) >= 2 + grow:
            spaces = spaces[:len(spaces) - grow]
        elif len(spaces) > 2:
            spaces = "  "
        return new + spaces

    subs.append((re.compile(rf"(?P<path>\bworker/(?P<n>{worker_names})\.py)\b(?P<sp> *)"),
                 lambda m: keep_column(m, f"worker/{MAPPING[m.group('n')]}/{m.group('n')}.py")))
    # `worker/x.name` (a definition of x named in prose): the room goes in, the rest stays
    subs.append((re.compile(rf"\bworker/(?P<n>{worker_names})(?=\.(?!py\b)\w)"),
                 lambda m: f"worker/{MAPPING[m.group('n')]}/{m.group('n')}"))
    subs.append((re.compile(rf"""(?P<q>["'])worker(?P=q) / (?P=q)(?P<n>{worker_names})\.py(?P=q)"""),
                 lambda m: f"{m['q']}worker{m['q']} / {m['q']}{MAPPING[m['n']]}{m['q']} / {m['q']}{m['n']}.py{m['q']}"))
    if bench_names:
        subs.append((re.compile(rf"(?P<path>\bbenchmarks/(?P<n>{bench_names}))(?![\w/])(?P<sp> *)"),
                     lambda m: keep_column(m, f"benchmarks/{bench[m.group('n')]}")))
        subs.append((re.compile(rf"""(?P<q>["'])benchmarks(?P=q) / (?P=q)(?P<n>{bench_names})(?P=q)"""),
                     lambda m: f"{m['q']}benchmarks{m['q']} / " + " / ".join(
                         f"{m['q']}{p}{m['q']}" for p in bench[m['n']].split("/"))))
    subs.append((re.compile(r"\bbenchmarks/explore_\{"), "benchmarks/explore/explore_{"))
    for pat, new in COMMANDS:
        subs.append((re.compile(pat), new))
    return subs


def wrap(text: str, indent: str, width: int = 116) -> str:
    out, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(out + [line])


def fix_file_anchors(text: str, deeper: int) -> str:
    """A file moved `deeper` folders down: its Path(__file__).resolve() ancestors gain as many .parent."""
    if deeper <= 0:
        return text
    return re.sub(r"(Path\(__file__\)\.resolve\(\)(?:\.parent)+)", r"\1" + ".parent" * deeper, text)


# ---- README "Where things are" ------------------------------------------------------------------------------------
def where_section() -> str:
    rows = ["## Where things are", "",
            "```",
            "server/pytorch_to_triton/   the MCP server, CLI and tools (no torch, no triton: docs/ARCHITECTURE.md, module by module)",
            "  audit/                    audit_kernel's static analysis, findings and report",
            "  docs_cache/               fetch_triton_docs: fetch, convert, search",
            "  cluster/                  --cluster: the Dask engine (optional extra)",
            "  worker/                   the worker process, the only one that imports torch, triton or user code:",
            "    __main__.py, prewarm.py   its entry (request loop, dispatch) and start-up work"]
    for sub in SUBPACKAGES:
        files = sorted(m for m, s in MAPPING.items() if s == sub and (WORKER / sub / f"{m}.py").exists())
        rows.append(f"    {sub + '/':<24}{_ROOM_LINES[sub]}")
        listing, line = [], ""
        for f in files:
            if len(line) + len(f) + 5 > 88:
                listing.append(line.rstrip())
                line = ""
            line += f + ".py, "
        listing.append(line.rstrip().rstrip(","))
        rows += [f"    {'':<24}{chunk}" for chunk in listing]
    rows += ["benchmarks/                 scripts that reproduce benchmarks/RESULTS.md (the figures, how each was measured)",
             "  gpu_session.sh            the one GPU runner: PART=\"name ...\" runs benchmarks/gpu_parts/<name>.sh in order",
             "  explore/                  exploration scripts that found a number (README.md: one line each)",
             "  trials/, tasks/, results/ fresh assistants' trial stages, small tasks the scripts time, recorded outputs",
             "examples/                   the gallery: per op a PyTorch reference and stages 1-3 (README each)",
             "SKILL.md, references/       the agent skill (workflow, task format, audit guide, sandbox)",
             "tests/                      the tests; fixtures of good and bad kernels in files, labelled",
             "docs/                       ARCHITECTURE.md (module by module), FAULTS.md (what a kernel can do wrong)"]
    if Path("docs/structure.whiteboard.json").exists():
        rows.append("  structure.whiteboard.json the worker's rooms and which may import which (held against the code)")
    rows += ["```", "", ""]
    return "\n".join(rows)


_ROOM_LINES = {
    "device": "where kernels run: device choice, Triton import, launch recorder, the CPU interpreter's fixes",
    "confine": "the Landlock sandbox, the sealed reference, the reference-call watch",
    "validation": "run_validation and what every tool shares with it: tasks, cases, Validator, guards",
    "benchmark": "run_benchmark: timing, this device's peaks, roofline figures, the no-GPU estimate",
    "probe": "audit_kernel's probes: inputs, KernelBench harnesses, host lines, bounds check",
}


def regroup_architecture(text: str) -> str:
    """docs/ARCHITECTURE.md: the worker's rows (`├── worker/<room>/x.py  what`) grouped under their rooms."""
    lines = text.split("\n")
    row = re.compile(r"^   [├└]── worker/(?:(?P<sub>\w+)/)?(?P<f>\w+\.py)\s+(?P<what>.*)$")
    start = next((i for i, ln in enumerate(lines) if row.match(ln)), None)
    if start is None or any(re.match(r"^   [├└]── worker/\w+/\s", ln) for ln in lines):
        return text  # no worker rows, or grouped already
    entries, i = [], start
    while i < len(lines) and (row.match(lines[i]) or lines[i].startswith("   │    ")):
        m = row.match(lines[i])
        if m:
            entries.append([m["sub"] or "", m["f"], [m["what"]]])
        else:
            entries[-1][2].append(lines[i].strip(" │"))
        i += 1
    col = 31
    out = []
    groups = [("", [e for e in entries if not e[0]])]
    groups += [(sub, [e for e in entries if e[0] == sub]) for sub in SUBPACKAGES]
    groups = [(g, es) for g, es in groups if es]
    for gi, (sub, es) in enumerate(groups):
        last_group = gi == len(groups) - 1
        if not sub:
            for e in es:
                out.append(f"   ├── {'worker/' + e[1]:<{col - 7}}{e[2][0]}")
                out += [f"   │{'':<{col - 4}}{c}" for c in e[2][1:]]
            continue
        out.append(f"   {'└' if last_group else '├'}── {'worker/' + sub + '/':<{col - 7}}{_ROOM_LINES[sub]}")
        bar = " " if last_group else "│"
        for ei, e in enumerate(es):
            last = ei == len(es) - 1
            head = f"   {bar}   {'└' if last else '├'}── "
            out.append(f"{head}{e[1]:<{max(col - len(head), len(e[1]) + 2)}}{e[2][0]}")
            out += [f"   {bar}   {' ' if last else '│'}{'':<{col - 8}}{c}" for c in e[2][1:]]
    return "\n".join(lines[:start] + out + lines[i:])


def update_readme(text: str) -> str:
    section = where_section()
    m = re.search(r"^## Where things are\n.*?(?=^## )", text, flags=re.S | re.M)
    if m:
        return text[:m.start()] + section + text[m.end():]
    anchor = re.search(r"^## Measured results", text, flags=re.M)
    if not anchor:
        return text.rstrip("\n") + "\n\n" + section
    return text[:anchor.start()] + section + text[anchor.start():]


def update_pyproject(text: str) -> str:
    want = [f'  "{WORKER_PKG}.{s}",' for s in sorted(SUBPACKAGES)]
    lines = text.splitlines()
    if f'  "{WORKER_PKG}",' not in lines:
        raise Refused(f'pyproject.toml: no line `  "{WORKER_PKG}",` in [tool.setuptools] packages')
    lines = [ln for ln in lines if ln not in want]
    i = lines.index(f'  "{WORKER_PKG}",')
    lines[i + 1:i + 1] = want
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def init_text(sub: str) -> str:
    return f'"""{SUBPACKAGES[sub]["doc"]}\n"""\n'


# ---- the self-check ---------------------------------------------------------------------------------------------
def self_check() -> list[str]:
    problems = []
    files = [Path(p) for p in tracked_files() if p.endswith(".py") and not p.startswith(FROZEN)]
    for f in files:
        if not f.is_relative_to("server"):
            continue
        pkg = package_of(f)
        try:
            tree = ast.parse(f.read_text())
        except SyntaxError as e:
            problems.append(f"{f}: does not parse: {e}")
            continue
        here = f.relative_to(WORKER).parts if f.is_relative_to(WORKER) else None
        room = None if here is None else here[0] if len(here) > 1 else "top"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = resolve(pkg, node.level, node.module) if node.level else (node.module or "")
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if not t.startswith(PKG):
                    continue
                p = Path("server", *t.split("."))
                exists = p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()
                if t == base and not exists:
                    problems.append(f"{f}:{node.lineno}: imports {t}, which is no module")
                if not exists or room is None or not t.startswith(WORKER_PKG + "."):
                    continue
                to = t[len(WORKER_PKG) + 1:].split(".")[0]
                if to in ("__main__", "prewarm") and room != "top":
                    problems.append(f"{f}:{node.lineno}: {room}/ imports the top ({t})")
                elif to in SUBPACKAGES and room in SUBPACKAGES and to != room \
                        and to not in SUBPACKAGES[room]["may"]:
                    problems.append(f"{f}:{node.lineno}: {room}/ imports {to}/ ({t}); its table row allows "
                                    f"{SUBPACKAGES[room]['may'] or 'nothing'}")
    guards = WORKER / MAPPING["guards"] / "guards.py"
    if guards.exists():
        m = re.search(r"HARNESS_MODULES = \(([^)]*)\)", guards.read_text())
        for name in re.findall(r'"(\w+)"', m.group(1) if m else ""):
            if MAPPING.get(name) != MAPPING["guards"]:
                problems.append(f"{guards}: HARNESS_MODULES names {name}, which is not in guards' package "
                                f"({MAPPING['guards']}/): sys.modules[f'{{__package__}}.{name}'] would miss it")
    old_bench = "|".join(re.escape(n) for n in [*EXPLORE, *RENAMED, *GPU_SCRIPTS])
    old_paths = re.compile(r"\bworker/(" + "|".join(MAPPING) + r")(\.py\b|\.\w)|" + re.escape(WORKER_PKG) + r"\.(" +
                           "|".join(MAPPING) + r")\b|\bbenchmarks/(" + old_bench + r")(?![\w/])|"
                           r"\bbenchmarks/explore_\{|\b(" + "|".join(re.escape(n) for n in GPU_SCRIPTS) + r")\b")
    for p in tracked_files():
        if p.startswith(FROZEN) or Path(p).suffix not in TEXT_EXT:
            continue
        try:
            text = Path(p).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        hits = list(old_paths.finditer(text))
        hits += [m for m in FROM_WORKER.finditer(text)
                 if any(i.split(" as ")[0] in MAPPING for i in m.group(1).split(", "))]
        for m in hits:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{p}:{line}: still names the old place {m.group(0)}")
    for f in files:
        if str(f).startswith(("benchmarks/explore/",)) or str(f).startswith(str(WORKER)):
            t = f.read_text()
            if "__file__" in t and "Path(__file__).resolve()" not in t and "os.path" in t and "dirname(__file__)" in t:
                problems.append(f"{f}: uses os.path.dirname(__file__): check its ancestors by hand")
    return problems


# ---- main -----------------------------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    ap.add_argument("--no-ruff", action="store_true", help="skip `ruff check --fix --select I` on touched files")
    a = ap.parse_args()
    if not Path("pyproject.toml").is_file() or not WORKER.is_dir():
        print(f"run from the repository root (no pyproject.toml or {WORKER} here)", file=sys.stderr)
        return 2

    wmoves, problems = check_worker_inventory()
    bmoves, bremove, bproblems = bench_plan()
    problems += bproblems
    if problems:
        print("REFUSED: nothing was changed. Give these a home in the table (restructure.py) first:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 2

    moves = worker_moves()
    log(f"worker/: {len(wmoves)} file(s) to move; benchmarks/: {len(bmoves)} to move, {len(bremove)} GPU script(s) "
        f"to fold into parts")
    for s, d in wmoves + bmoves:
        log(f"  git mv {s} {d}")
    for r in bremove:
        log(f"  git rm benchmarks/{r} (now a part of gpu_session.sh)")
    if a.dry_run:
        return 0

    touched: set[str] = set()
    # 1. imports and dotted names, in place (before the moves, so each file's old package is known)
    dest_of = {str(s): d for s, d in wmoves + bmoves}
    for p in tracked_files():
        if not p.endswith(".py") or not p.startswith(CODE_DIRS) or p.startswith(FROZEN):
            continue
        path = Path(p)
        old_pkg = package_of(path)
        new_path = dest_of.get(p, path)
        new_pkg = package_of(new_path)
        text = path.read_text()
        new = rewrite_imports(text, old_pkg, new_pkg, moves)
        if p in dest_of:
            new = fix_file_anchors(new, len(dest_of[p].parts) - len(path.parts))
        if new != text:
            path.write_text(new)
            touched.add(str(new_path))

    # 2. the moves
    for sub in SUBPACKAGES:
        (WORKER / sub).mkdir(exist_ok=True)
    (Path("benchmarks") / "explore").mkdir(exist_ok=True)
    for s, d in wmoves + bmoves:
        git("mv", str(s), str(d))
        touched.add(str(d))
    for sub in SUBPACKAGES:
        init = WORKER / sub / "__init__.py"
        if not init.exists() or init.read_text() != init_text(sub):
            init.write_text(init_text(sub))
            git("add", str(init))
    top_init = WORKER / "__init__.py"
    if top_init.read_text() != f'"""{TOP_DOC}\n"""\n':
        top_init.write_text(f'"""{TOP_DOC}\n"""\n')

    # 3. benchmarks: parts, removed scripts, explore README
    parts = Path("benchmarks/gpu_parts")
    if bremove or not all((parts / n).exists() for n in PARTS):
        for name, (what, body) in PARTS.items():
            text = PART_HEAD.format(name=name[:-3], what=what[:1].upper() + what[1:]) + body
            if not (parts / name).exists() or (parts / name).read_text() != text:
                (parts / name).write_text(text)
                git("add", str(parts / name))
    for r in bremove:
        git("rm", "-q", f"benchmarks/{r}")
    readme = Path("benchmarks/explore/README.md")
    rtext = readme.read_text() if readme.exists() else "# Exploration scripts\n\n"
    add = [wrap(f"- `{n}`: {line}", "  ") for n, line in EXPLORE.items() if f"`{n}`" not in rtext]
    if add:
        readme.write_text(rtext.rstrip("\n") + "\n" + "\n".join(add) + "\n")

    # 4. dotted names and path mentions in every text file
    subs = path_rewriter()
    for p in tracked_files():
        if p.startswith(FROZEN) or Path(p).suffix not in TEXT_EXT:
            continue
        path = Path(p)
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        new = rewrite_dotted(text)
        for pat, rep in subs:
            new = pat.sub(rep, new)
        if new != text:
            path.write_text(new)
            if p.endswith(".py"):
                touched.add(p)
    Path("pyproject.toml").write_text(update_pyproject(Path("pyproject.toml").read_text()))
    Path("README.md").write_text(update_readme(Path("README.md").read_text()))
    arch = Path("docs/ARCHITECTURE.md")
    if arch.exists():
        arch.write_text(regroup_architecture(arch.read_text()))

    # 5. import order in what was touched
    py = sorted(t for t in touched if t.endswith(".py") and Path(t).exists())
    if py and not a.no_ruff:
        ruff = shutil.which("ruff")
        if ruff:
            subprocess.run([ruff, "check", "--fix", "--select", "I", "-q", *py], check=False)
        else:
            log("note: ruff not found: run `ruff check --fix --select I` on the moved files yourself")

    problems = self_check()
    if problems:
        print("SELF-CHECK FAILED after the change (the tree is changed; `git checkout . && git clean -fd` undoes it):",
              file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 3
    log(f"done: {len(wmoves)} worker file(s) and {len(bmoves)} benchmark(s) moved, {len(touched)} file(s) rewritten; "
        "self-check passed")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    try:
        sys.exit(main())
    except Refused as e:
        print(f"REFUSED: {e}", file=sys.stderr)
        sys.exit(2)
