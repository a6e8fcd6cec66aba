"""Compile what the interpreter ran for the target GPU (issue 36): what passes on a CPU must compile on the GPU.

The launch recorder (runtime.py) keeps each launch's specialisation (launch_specs.py) while a validation runs under
Triton's interpreter. This module compiles each distinct one for the target(s) (sm_90 unless told otherwise) in a
child process (target_compile_child.py), caches the answer on disk by (source hash of the kernel's file and its
neighbours, specialisation, target, Triton version), and turns the rows into findings:
- a compile failure: a contract failure of the candidate, with the compiler's message and the kernel's line;
- shared memory over the target's per-block limit, or registers x threads over the register file: the config cannot
  launch there (a failure for a kernel without autotune; a warning naming the config when an autotuner would skip it);
- spills (local memory): a warning naming the config;
- Triton deprecation warnings raised while compiling: a portability warning naming the Triton that raised it.

Cost (issue 36: under 25 % of a CPU validation): one child per validation (forked from the worker's compile zygote:
compile_zygote.py), fed while the cases run; every config
goes through Triton's frontend (cheap: the compile errors the interpreter lets through), and to a cubin the config the
interpreter ran and the two likeliest to overflow, the others while their compiles take less than SHARE of the
validation's time. The section says per kernel how many configs reached a cubin and which stayed at the frontend.

On a GPU the real compile already happens at launch: nothing here runs there (the audit's compiled facts read it),
except, with P2T_DUMP_LAUNCH_SPECS set, the dump of each launch and its real compile (compile_agreement.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import gpu_targets
from . import compile_zygote
from .compile_zygote import ForkedChild
from .compiled import occupancy
from .launch_specs import LaunchSpec, source_hash

# The limits and the parser live in gpu_targets.py (the server checks the user's targets with the same code).
SMEM_PER_BLOCK, SMEM_PER_SM, THREADS_PER_SM, REGS_PER_SM = (gpu_targets.SMEM_PER_BLOCK, gpu_targets.SMEM_PER_SM,
                                                            gpu_targets.THREADS_PER_SM, gpu_targets.REGS_PER_SM)
DUMP_ENV = "P2T_DUMP_LAUNCH_SPECS"  # a folder: each validation writes its launches there (unconfined workers only)
MAX_COMPILES = 24  # specialisations per validation: all configs of each kernel's first one, the launch's for the rest
MAX_PER_KERNEL = 2  # the sizes' divisibility makes new keys per case (45's stage 3 had 23 over its cases, 2-3 s
# each for a dot kernel on this CPU); the first key's every config and one more key show what the cases change
TIMEOUT_S = 240.0
CACHE_VERSION = "4"  # 4: rows name their config's meta-parameters (the estimate counts each); 3: dtype constexprs
# Optional full compiles (beyond the interpreter's config and the two likeliest to overflow) may take this share of
# the validation's time: the rest of issue 36's 25 % goes to the child's imports and the frontend pass (measured,
# RESULTS.md). The audit and the estimate have no share: every config reaches a cubin there.
SHARE = 0.1
# Deprecations Triton raises while compiling (3.9 warns on builtin min/max of non-scalar tensors; 3.6 compiled the
# fixture silently, measured): the advice for each; any other warning from triton.language keeps its own text.
PORTABILITY = [
    ("builtin min", "Python's builtin min on Triton tensors", "use tl.minimum"),
    ("builtin max", "Python's builtin max on Triton tensors", "use tl.maximum"),
]


def parse_targets(value: Any) -> list[int]:
    """Targets as compute capabilities (gpu_targets.parse)."""
    return gpu_targets.parse(value)


def cache_dir() -> Path:
    """Where answers are kept: beside Triton's cache (the one place a confined worker may write), else ~/.cache."""
    base = os.environ.get("TRITON_CACHE_DIR")
    root = Path(base) / "p2t_target_compile" if base else Path.home() / ".cache" / "pytorch_to_triton" / "target"
    root.mkdir(parents=True, exist_ok=True)
    return root


@dataclass
class Job:
    """One specialisation to compile: every autotune config (first of its kernel) or the launch's own."""

    spec: LaunchSpec
    all_configs: bool
    key: str = ""
    first: bool = True  # the kernel's first specialisation: its must-compile configs reach a cubin whatever the budget
    front_only: bool = False  # a case's specialisation of a kernel the full size also launched: frontend only (the
    # GPU runs the full size's; issue 36's cost bar leaves no time for cubins of sizes it never times)
    rows: list[dict[str, Any]] = field(default_factory=list)
    unreachable: str | None = None
    pruned: bool = False
    cached: bool = False


def plan(specs: list[LaunchSpec], targets: list[int], triton_version: str, max_per_kernel: int = MAX_PER_KERNEL,
         hashes: dict[str, str] | None = None) -> tuple[list[Job], list[str]]:
    """Distinct specialisations, in launch order; notes for launches that cannot be compiled elsewhere."""
    jobs: list[Job] = []
    notes: list[str] = []
    # Jobs are keyed on the whole spec list so far: submit() is called again with a longer list, the same jobs come out
    seen: set[str] = set()
    first_of: set[str] = set()
    per_kernel: dict[str, int] = {}
    hashes = {} if hashes is None else hashes  # file -> source hash (a validation reads each file once)
    # A kernel the dry run launched at full size gets that specialisation plus max_per_kernel - 1 of the cases': the
    # number compiled stays what it was before the full size was added (issue 36's cost bar)
    with_full = {s.qualname for s in specs if s.full_size and not s.error}
    for s in specs:
        if s.error:
            note = f"{s.kernel}: not compiled for the target ({s.error})"
            if note not in notes:
                notes.append(note)
            continue
        k = s.key()
        if k in seen:
            continue
        seen.add(k)
        if not s.full_size:  # the full size's launches are what the GPU runs: never capped
            per_kernel[s.qualname] = per_kernel.get(s.qualname, 0) + 1
            if per_kernel[s.qualname] > max_per_kernel - (s.qualname in with_full):
                continue
        first = s.qualname not in first_of
        all_cfg = s.autotuned and first
        first_of.add(s.qualname)
        h = hashes.setdefault(s.file, source_hash(s.file))
        front = not s.full_size and s.qualname in with_full
        tag = [CACHE_VERSION, h, k, all_cfg, targets, triton_version] + (["front"] if front else [])
        key = hashlib.sha256(json.dumps(tag).encode()).hexdigest()
        jobs.append(Job(s, all_cfg, key, first=first, front_only=front))
    for q, n in per_kernel.items():
        cap = max_per_kernel - (q in with_full)
        if n > cap:
            notes.append(f"{q}: {n} specialisations launched by the cases, the first {cap} compiled for the target"
                         + (" (and the full size's)" if q in with_full else ""))
    return jobs, notes


class TargetCompiler:
    """Compiles the recorded launches of one validation for the targets; submit early, collect at the end.

    share: optional full compiles may take share x the time since this object was made (None: every config to a
    cubin). One child process per compiler, started by prestart() or the first submit that needs it, fed one line
    per submit."""

    def __init__(self, targets: list[int], triton_version: str, max_compiles: int = MAX_COMPILES,
                 max_per_kernel: int = MAX_PER_KERNEL, timeout_s: float = TIMEOUT_S, share: float | None = None):
        self.max_compiles, self.max_per_kernel, self.timeout_s = max_compiles, max_per_kernel, timeout_s
        self.targets = targets
        self.version = triton_version
        self.share = share
        self.jobs: dict[str, Job] = {}
        self._hashes: dict[str, str] = {}
        self.notes: list[str] = []
        self._child: _Child | ForkedChild | None = None
        self.child_kind: str | None = None  # "forked" from the compile zygote or "fresh", once one has answered
        self._sent: list[Job] = []  # the child's job ids index this list
        self.t_start = time.perf_counter()
        self.t_wait = 0.0
        self.child_s: dict[str, float] = {}  # the child's own seconds: imports, frontend, full compiles
        self._marker: Path | None = None  # written once a validation of the candidate's source has compiled
        self._plan_notes: list[str] = []
        # The dry run's launches at the problem's full size (issue 46): planned first in every submit, so each is
        # its kernel's first specialisation (every config compiled) and never falls to the per-kernel cap.
        self.full_specs: list[LaunchSpec] = []

    def prestart(self, candidate: str) -> None:
        """Start the child now, importing the candidate's module while the first cases run, unless a validation of
        this source already compiled what it launched (then the child starts only for a launch not seen before)."""
        h = source_hash(str(Path(candidate).resolve()))
        if not h:
            return
        self._marker = cache_dir() / ("seen-" + hashlib.sha256(json.dumps(
            [CACHE_VERSION, h, self.targets, self.version, self.share]).encode()).hexdigest()[:32])
        if self._marker.exists() or self._child is not None:
            return
        self._child = _child({"jobs": [], "targets": self.targets, "share": self.share, "elapsed_s": 0.0,
                              "rows_cache": str(cache_dir() / "rows"), "preload": [str(Path(candidate).resolve())]})

    def submit(self, specs: list[LaunchSpec]) -> None:
        """Start compiling the specialisations not seen yet (cached ones are read at once)."""
        full = {s.key() for s in self.full_specs}
        specs = list(self.full_specs) + [s for s in specs if s.key() not in full]
        jobs, notes = plan(specs, self.targets, self.version, self.max_per_kernel, self._hashes)
        self._plan_notes = notes  # the whole launch list is planned again each time: its latest notes stand
        todo = []
        for j in jobs:
            if j.key in self.jobs:
                continue
            if len(self.jobs) >= self.max_compiles:
                self.notes.append(f"{j.spec.kernel}: more than {self.max_compiles} specialisations, the rest not "
                                  "compiled")
                break
            self.jobs[j.key] = j
            got = _read_cache(j.key)
            if got is not None and got.get("partial") and self.share is None:
                got = None  # every config wanted: the child compiles the rest (its row cache has what is done)
            if got is not None:
                j.rows, j.unreachable, j.pruned, j.cached = got["rows"], got.get("unreachable"), got.get("pruned",
                                                                                                         False), True
            else:
                todo.append(j)
        if not todo:
            return
        line = {"jobs": [dict(j.spec.as_dict(), id=len(self._sent) + i, autotuned=j.all_configs, must=j.first,
                              front_only=j.front_only)
                         for i, j in enumerate(todo)], "elapsed_s": time.perf_counter() - self.t_start}
        self._sent.extend(todo)
        if self._child is not None and self._child.broken:  # it died: its jobs are named at collect
            self._child.kill()
            self._child = None
        if self._child is None:
            self._child = _child(dict(line, targets=self.targets, share=self.share,
                                      rows_cache=str(cache_dir() / "rows")))
        else:
            self._child.send(line)

    def collect(self) -> dict[str, Any]:
        """Wait for the child; the report section (rows per kernel/config/target, what was cached)."""
        t0 = time.perf_counter()
        if self._child is not None:
            self.child_kind = self._child.kind
            answer = self._child.finish(time.perf_counter() - self.t_start, self.timeout_s, self.notes)
            self.child_s = (answer or {}).get("seconds") or {}
            for res in (answer or {}).get("results", []):
                j = self._sent[int(res["job"])]
                j.rows, j.unreachable, j.pruned = res.get("rows", []), res.get("unreachable"), bool(res.get("pruned"))
                _write_cache(j)
            lost = [j for j in self._sent if not j.rows and not j.unreachable]
            if lost:
                self.notes.append(f"{len(lost)} specialisation(s) not compiled for the target, the compile child "
                                  f"having stopped ({', '.join(sorted({j.spec.kernel for j in lost}))})")
            if answer is not None and not lost and self._marker is not None:
                try:
                    self._marker.touch()
                except OSError:
                    pass
            self._child = None
        self.t_wait += time.perf_counter() - t0
        return self.section()

    def section(self) -> dict[str, Any]:
        """The report's target_compile section."""
        rows = []
        for j in self.jobs.values():
            if j.unreachable:
                self.notes.append(f"{j.spec.kernel}: not compiled for the target ({j.unreachable})")
            for r in j.rows:
                rows.append({"kernel": j.spec.kernel, "line": r.get("line"), **_with_occupancy(r),
                             "autotuned": j.spec.autotuned, "pruned": j.pruned, "spec_key": j.spec.short_key(),
                             "full_size": j.spec.full_size, "tier": j.spec.tier, "kind": j.spec.kind})
        self.notes.extend(n for n in coverage_notes(rows, self.share) if n not in self.notes)
        full = sum(r.get("level", "full") == "full" or r.get("ok") is False for r in rows)
        return {"triton_version": self.version, "targets": [f"sm_{c}" for c in self.targets], "rows": rows,
                "specialisations": len(self.jobs), "cached": sum(j.cached for j in self.jobs.values()),
                "configs": len(rows), "configs_to_cubin": full, "wait_s": round(self.t_wait, 3), "child_s": self.child_s,
                "child": self.child_kind,
                "notes": list(dict.fromkeys(self._plan_notes + self.notes))}


def coverage_notes(rows: list[dict[str, Any]], share: float | None) -> list[str]:
    """Per kernel and target, the configs the budget left at Triton's frontend, named (never passed over in silence)."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["kernel"], r["target"]), []).append(r)
    out = []
    for (kernel, target), rs in by.items():
        front = [r for r in rs if r.get("level") == "front" and r.get("ok")]
        if not front:
            continue
        refused = sum(r.get("ok") is False for r in rs)
        budget = f"{share:.0%} of the validation's time" if share is not None else "the time limit"
        names = "; ".join(r["config"] for r in front[:6]) + (f"; and {len(front) - 6} more" if len(front) > 6 else "")
        out.append(f"{kernel}: {len(rs) - len(front) - refused} of {len(rs)} configs (over its specialisations) "
                   f"compiled to a cubin for {target}" + (f", {refused} refused by the compiler" if refused else "")
                   + f"; the other {len(front)} passed "
                   "Triton's frontend only (no compile error there; their registers, spills and shared memory "
                   f"unchecked: the full compiles' budget, {budget}, ran out): {names}. audit_kernel compiles every "
                   "config (a re-validation of the same source reads these results from the cache)")
    return out


def for_validation(args: dict[str, Any], rt: Any, notes: list[str], share: float | None = None,
                   candidate: Any = None) -> TargetCompiler | None:
    """A compiler for this validation or audit (launch recording switched on), or None: on a GPU (the launches compiled for
    real), or when the targets are off (args["target_gpus"], else P2T_TARGET_GPUS, else sm_90). share: see
    TargetCompiler (run_validation passes SHARE; the audit compiles every config). candidate: the candidate's file,
    whose module the child imports at once (TargetCompiler.prestart)."""
    from .runtime import RECORDER

    if os.environ.get(DUMP_ENV):  # every launch for compile_agreement.py (on a GPU with the real compile's facts)
        RECORDER.record_launches(True)
    if not rt.interpreter:
        return None
    raw = args["target_gpus"] if "target_gpus" in args else os.environ.get("P2T_TARGET_GPUS")
    if raw == []:  # the service's parsed "none"
        return None
    try:
        targets = parse_targets(raw)
    except ValueError as e:
        notes.append(f"target compile skipped: {e}")
        return None
    if not targets:
        return None
    RECORDER.record_launches(True)
    compiler = TargetCompiler(targets, rt.triton_version, share=share)
    if candidate:
        compiler.prestart(candidate)
    return compiler


def compile_now(compiler: TargetCompiler, specs: list[LaunchSpec], notes: list[str]) -> dict[str, Any]:
    """Compile these specialisations and wait: the section, or {"error": ...} after a fault of this check."""
    try:
        compiler.submit(specs)
        section = compiler.collect()
    except Exception as e:  # noqa: BLE001 - a fault of this check must not cost the caller its result
        notes.append(f"target compile skipped after an internal error: {type(e).__name__}: {e}"[:300])
        return {"error": f"{type(e).__name__}: {e}"[:300], "notes": notes}
    section["notes"] = list(dict.fromkeys(notes + section["notes"]))
    return section


def finish(compiler: TargetCompiler, specs: list[LaunchSpec], v: Any) -> dict[str, Any]:
    """Compile what is left, wait, and put the findings on the Validator; the report's section."""
    from .runtime import RECORDER

    RECORDER.record_launches(False)
    section = compile_now(compiler, specs, [])
    if "error" in section:
        v.notes.extend(section["notes"])
        return section
    tier, kind = v.tier, v.kind
    for f in judge(section):  # a robustness specialisation's finding goes to the robustness section (Validator.find)
        v.tier, v.kind = f["tier"], f["kind"]
        v.find(f["check"], f"target {', '.join(section['targets'])}" + (f" ({f['kind']} case)" if f["kind"] else ""),
               f["message"], f["evidence"], f["severity"])
        if f["tier"] == "contract":
            v.findings[f["check"]]["fix"] = f["fix"]
    v.tier, v.kind = tier, kind
    return section


def dump(report: dict[str, Any], rt: Any) -> None:
    """With P2T_DUMP_LAUNCH_SPECS set: the candidate's recorded launches (and on a GPU the real compile's facts per
    launch) as JSON in that folder, for benchmarks/compile_agreement.py."""
    folder = os.environ.get(DUMP_ENV)
    if not folder:
        return
    from .runtime import RECORDER

    specs = [dict(s.as_dict(), key=s.key(), error=s.error, facts=RECORDER.spec_facts.get(s.key()))
             for s in RECORDER.launch_specs()]
    RECORDER.record_launches(False)
    name = hashlib.sha1(str(report.get("candidate")).encode()).hexdigest()[:16]
    data = {"candidate": report.get("candidate"), "device": rt.device, "gpu": rt.gpu_name,
            "triton_version": rt.triton_version, "specs": specs, "target_compile": report.get("target_compile")}
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / f"{name}.json").write_text(json.dumps(data, default=str))


def _with_occupancy(r: dict[str, Any]) -> dict[str, Any]:
    cc = int(str(r.get("target", "sm_90")).removeprefix("sm_"))
    if not r.get("ok") or not r.get("num_warps"):
        return dict(r)
    occ = occupancy(r.get("n_regs"), r.get("shared"), r.get("num_warps"),
                    {"max_threads_per_sm": THREADS_PER_SM.get(cc, 2048), "regs_per_sm": REGS_PER_SM,
                     "smem_per_sm": SMEM_PER_SM.get(cc, 233472)})
    return {**r, **occ}


def _read_cache(key: str) -> dict[str, Any] | None:
    try:
        return json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def _partial(rows: list[dict[str, Any]]) -> bool:
    """Whether the budget left configs at the frontend (an audit compiles them; a re-validation reads them as is)."""
    return any(r.get("level") == "front" and r.get("ok") for r in rows)


def _write_cache(j: Job) -> None:
    if any(r.get("ok") is None for r in j.rows):  # a fault of this tool is not kept
        return
    try:
        path = cache_dir() / f"{j.key}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"rows": j.rows, "unreachable": j.unreachable, "pruned": j.pruned,
                                   "partial": _partial(j.rows)}))
        tmp.replace(path)
    except OSError:
        pass


def _child(first: dict[str, Any]) -> _Child | ForkedChild:
    """A compile child sent `first`: forked from the worker's compile zygote, else a fresh process."""
    return compile_zygote.session(first) or _Child(first)


class _Child:
    """The compile child of one TargetCompiler (a fresh process): request lines on its stdin, one JSON answer on its stdout."""

    kind = "fresh"

    def __init__(self, first: dict[str, Any]):
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        env["TRITON_DEFAULT_FP_FUSION"] = env.get("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9 warns when unset; 1 = default
        self.started = time.perf_counter()
        self.err = tempfile.TemporaryFile(mode="w+")  # a file: the child never blocks on a full stderr pipe
        self.proc = subprocess.Popen([sys.executable, "-m", "pytorch_to_triton.worker.device.target_compile_child"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=env)
        self.broken: str | None = None
        self.send(first)

    def send(self, line: dict[str, Any]) -> None:
        """One request line (the child reads it while it compiles)."""
        if self.broken or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(json.dumps(line) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.broken = f"{type(e).__name__}: {e}"

    def kill(self) -> None:
        """Stop the child (it broke its pipe). Its pipes are closed, not drained: a process the candidate's module
        started at import holds them open (the worker, a subreaper, keeps it for the sandbox to kill and name)."""
        self.proc.kill()
        self.proc.wait()
        self._close()
        self.err.close()

    def _close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass

    def _answer(self, timeout: float) -> str | None:
        """The child's one answer line, or None after `timeout` s. Never waits for the pipe's end: a process the
        candidate's module forked at import (a hostile corpus's sleeper) inherits it and keeps it open."""
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline() if self.proc.stdout else ""),
                                  daemon=True)
        reader.start()
        reader.join(timeout)
        return box[0] if box else None

    def finish(self, elapsed_s: float, timeout_s: float, notes: list[str]) -> dict[str, Any] | None:
        """Tell the child the validation took elapsed_s, wait for its answer (None after a fault, with a note)."""
        self.send({"finish": True, "elapsed_s": elapsed_s})
        # the cases' time is not the compile's: whatever the validation took, the child gets a minute to answer
        left = max(60.0, timeout_s - (time.perf_counter() - self.started))
        try:
            out = self._answer(left)
            if out is None:
                self.proc.kill()
                notes.append(compile_zygote.stopped_note(timeout_s))
                return None
            try:
                self.proc.wait(timeout=10)  # it exits once it has answered
            except subprocess.TimeoutExpired:
                self.proc.kill()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self._close()
            self.err.seek(0)
            err = self.err.read()
            self.err.close()
        try:
            return json.loads(out)
        except ValueError:
            notes.append(compile_zygote.no_answer_note(self.proc.returncode, err))
            return None


def judge(section: dict[str, Any]) -> list[dict[str, Any]]:
    """Findings from the compile rows: (check, severity "fail"/"warn", message, evidence, fix) dicts."""
    out: list[dict[str, Any]] = []
    version = section.get("triton_version")
    by_kernel: dict[tuple[str, str, str, str | None], list[dict[str, Any]]] = {}
    for r in section.get("rows", []):  # contract rows first: a robustness finding that repeats one is dropped later
        robust = r.get("tier", "contract") != "contract"
        key = (r["kernel"], r["target"], "robustness" if robust else "contract", r.get("kind") if robust else None)
        by_kernel.setdefault(key, []).append(r)
    for (kernel, target, tier, kind), rows in sorted(by_kernel.items(), key=lambda kv: kv[0][2] != "contract"):
        cc = int(target.removeprefix("sm_"))
        n0 = len(out)
        failed = sorted((r for r in rows if r.get("ok") is False), key=lambda r: not r.get("full_size"))
        if failed:
            r = failed[0]
            where = f" (line {r['line']})" if r.get("line") else ""
            out.append({"check": "target_compile", "severity": "fail", "evidence": r,
                        "message": f"{kernel} does not compile for {target} with Triton {version}{where}{_full(r)}, "
                                   f"config {r['config']}: {_short(r.get('error'))}"
                                   + (f" ({len(failed)} of {len(rows)} configs fail)" if len(rows) > 1 else ""),
                        "fix": "fix the kernel where the compiler points (the interpreter runs it as Python and "
                               "accepts what the GPU compiler refuses)"})
        ok_rows = [r for r in rows if r.get("ok")]
        unfit = sorted((r for r in ok_rows if _unfit(r, cc)), key=lambda r: not r.get("full_size"))
        if unfit:
            autotuned = all(r.get("autotuned") for r in rows) and len(unfit) < len(ok_rows)
            r = unfit[0]
            out.append({"check": "target_resources", "severity": "warn" if autotuned else "fail", "evidence": r,
                        "message": f"{kernel} cannot launch on {target}{_full(r)}: config {r['config']} needs "
                                   f"{_unfit(r, cc)}" + (" (the autotuner skips it there)" if autotuned else ""),
                        "fix": "smaller BLOCK sizes or fewer num_stages for that config (shared memory), or fewer "
                               "num_warps (registers)"})
        spills = [r for r in ok_rows if (r.get("n_spills") or 0) > 0]
        if spills:
            r = max(spills, key=lambda x: x["n_spills"])
            out.append({"check": "register_spills", "severity": "warn", "evidence": r,
                        "message": f"{kernel} spills on {target}: config {r['config']} keeps {r['n_spills']} "
                                   f"registers in local memory ({r.get('n_regs')} registers/thread)",
                        "fix": "smaller BLOCK sizes or num_stages, or more num_warps, for that config"})
        for w in sorted({w for r in rows for w in r.get("warnings") or []}):
            hazard = next((h for h in PORTABILITY if h[0] in w), None)
            what = hazard[1] if hazard else w
            out.append({"check": "triton_portability", "severity": "warn", "evidence": {"warning": w},
                        "message": f"{kernel}: Triton {version} warns while compiling for {target}: {w} ({what}: "
                                   f"accepted by Triton {version}, an error from the release that removes it)",
                        "fix": hazard[2] if hazard else "follow the warning's advice"})
        for f in out[n0:]:  # the tier of the sizes that launched these specialisations (issue 45)
            f["tier"], f["kind"] = tier, kind
    return out


def _full(r: dict[str, Any]) -> str:
    """' at the problem's full size' for a row of the dry run's launches (issue 46), else ''."""
    return " at the problem's full size (the launch the GPU makes there, which the interpreter never ran)" \
        if r.get("full_size") else ""


def _unfit(r: dict[str, Any], cc: int) -> str:
    """What keeps a compiled config off the target ('' when it fits)."""
    shared = int(r.get("shared") or 0)  # what Triton's launcher checks against the device's limit
    limit = SMEM_PER_BLOCK.get(cc, 232448)
    if shared > limit:
        return f"{shared} bytes of shared memory, over {target_name(cc)}'s {limit} per block"
    regs, warps = r.get("n_regs"), r.get("num_warps")
    if regs and warps and regs * 32 * warps > REGS_PER_SM:
        return f"{regs} registers x {32 * warps} threads, over the {REGS_PER_SM}-register file"
    return ""


def target_name(cc: int) -> str:
    """sm_90 for 90."""
    return f"sm_{cc}"


def _short(err: Any) -> str:
    text = str(err or "").strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else text)[:400]
