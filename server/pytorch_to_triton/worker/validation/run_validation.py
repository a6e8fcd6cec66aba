"""run_validation inside the worker: one candidate against the reference over every case, and the two-tier verdict.

cases.py says which cases run and the tier of each; validate.py's Validator runs them (kernelbench.py for a
KernelBench problem). ok is decided by the contract cases alone; robustness findings go in their own section
(`robustness`), each with its fix, and the verdict line names them ("pass; not robust to: empty dims").
"""

from __future__ import annotations

import _thread
import math
import time
from typing import Any

import torch

from ..device import interp_hints, interp_tf32, target_compile
from ..device.runtime import RECORDER, Runtime
from . import budget, dry_run, first_fix
from . import cases as cs
from . import compare as cmp
from . import kernelbench as kbench
from .errors_fmt import describe
from .guards import PatchWatch
from .loader import load_task
from .nest import flatten, tensors
from .tasks import SIZES_NEED_KERNELBENCH, Case, ImportFailure, Task, TaskError, dtype_from_name, dtype_name
from .validate import PRIORITY, Emit, Validator


def validate_candidate(args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch) -> dict[str, Any]:
    """The whole validation of one candidate file; returns the candidate's report as a dict."""
    v = Validator(args, rt, emit, patches)
    report: dict[str, Any] = {"candidate": args["candidate_display"], "ok": False, "cases": [], "findings": [],
                              "notes": v.notes, "error": None}
    t_start = time.perf_counter()
    threads0 = _thread._count()
    interp_tf32.STATS.reset()  # the report says which tl.dot precisions this candidate ran (interp_hints.annotate)
    try:
        task = load_task(v.ref_path, v.cand_path, args.get("reference_entry"), args.get("candidate_entry"), rt.device)
    except ImportFailure as e:
        err = describe(e.exc, "import", v.user_dirs)
        err["file_role"] = e.which
        if e.which == "reference":
            raise TaskError("import", f"the reference failed to import: {err['message']} "
                            f"(line {err.get('line')})", usage=True) from e
        report["error"] = err
        v.find("exception", "import", f"{e.which} failed to import: {err['type']}: {err['message'][:300]}", err)
        report["findings"] = list(v.findings.values())
        return report
    patched = patches.check_and_restore()  # import-time patches would otherwise change the reference's result
    if patched:
        v.find("timer_patched", "import", "importing the candidate replaced functions the harness or the reference "
               "relies on (restored before any case ran)", patched)
    started = _thread._count() - threads0
    if started > 0:  # a thread started at import and still running does work the per-call guards cannot see
        v.find("thread", "import", f"importing the candidate started {started} thread(s) that are still running")
    args["tolerances_merged"] = cmp.merged_tolerances(task.ref_mod, args.get("tolerances"))
    compiler = target_compile.for_validation(args, rt, v.notes, share=target_compile.SHARE, candidate=v.cand_path)
    if rt.interpreter:  # the size the GPU runs, which the interpreter never does: checked before the cases
        report["full_size"] = _full_size(v, task, args, compiler, emit, report["candidate"])
    if task.kernelbench:  # sizes, automatic variants and the stronger checks: kernelbench.py
        v.kb_checks = True
        specs = kbench.validate_cases(v, task, args, emit, report)
    else:
        if args.get("sizes"):
            raise TaskError("inputs", SIZES_NEED_KERNELBENCH, usage=True)
        specs = cs.form_a_specs(task.ref_mod, args.get("dtypes"), args.get("cases"), bool(args.get("replace_cases")),
                                args.get("only_cases"), cs.required(args))
    trials = max(1, int(args.get("trials", 3)))
    noncontig, layout_tier, layout_why = cs.layouts_tier(task.ref_mod, args, task.kernelbench)
    noncontig = noncontig and not task.kernelbench
    extreme = None if task.kernelbench or args.get("only_cases") or args.get("replace_cases") else \
        cs.extreme_spec(specs, cs.required(args))
    # Progress counts finished case runs (each event is sent as a run starts, with the runs finished before it): every
    # trial, the x1e4 case and the two layout variants. Runs that will not happen (a case the budget leaves out, the
    # trials after a failing one, a layout the inputs cannot take) come off the total, so the count never passes it
    # (issue 49: "[39/38]": the x1e4 case was never counted, and in-launch events add a fraction to the count).
    total = len(specs) * trials + (extreme is not None) + (2 if noncontig else 0)
    state: dict[str, Any] = {}
    done = 0
    failed_cases: set[str] = set()
    bud = budget.from_args(args, rt.device)
    rest = [] if task.kernelbench else list(specs)
    for i, spec in enumerate(rest):
        name, shape, dtype, scale = spec.name, spec.shape, spec.dtype, spec.scale
        v.tier, v.kind, v.values, v.hook = spec.tier, spec.kind, spec.values, spec.hook
        w = budget.shape_work(shape)
        # The first case, yours and the reference's declared SHAPES always run: only the tool's default shapes go.
        if i and spec.why.startswith("the tool's default") and not bud.fits(w, trials):
            bud.drop(f"{name} {dtype_name(dtype)}", w, trials)
            total -= trials
            continue
        for trial in range(trials):
            emit("progress", message=f"{report['candidate']}: {name} {dtype_name(dtype)} trial {trial + 1}/{trials}",
                 progress=done, total=total)
            t0 = time.perf_counter()
            rec = v.run_case(task, name, shape, dtype, scale, trial, state=state)
            done += 1
            bud.observe(w, 1, time.perf_counter() - t0)
            if not bud.announced and bud.seconds is not None and bud.rate is not None:
                bud.announced = True  # the up-front estimate: every case still to come
                line = f"{report['candidate']}: " + bud.plan_line(
                    [(f"{s.name} {dtype_name(s.dtype)}", budget.shape_work(s.shape), trials,
                      not s.why.startswith("the tool's default")) for s in rest[i + 1:]])
                v.notes.append(line)
                emit("progress", message=line, progress=done, total=total)
            v.cases.append(rec)
            if compiler is not None:  # new specialisations compile while the cases go on (none new: nothing runs)
                compiler.submit(RECORDER.launch_specs())
            if not rec["ok"]:
                failed_cases.add(name)
                total -= trials - trial - 1
                break  # one failing trial is enough; the next case tells more
    bud.settle(v.notes)
    if bud.note():
        v.notes.append(bud.note())
    if extreme is not None:  # the same case with |x| ~ 1e4: overflow in exp, x * x, unscaled sums
        v.tier, v.kind = extreme.tier, extreme.kind
        emit("progress", message=f"{report['candidate']}: {extreme.name}:x1e4", progress=done, total=total)
        v.cases.append(v.run_case(task, extreme.name, extreme.shape, extreme.dtype, extreme.scale, 0,
                                  variant="x1e4"))
        done += 1
    if noncontig:
        first = next((s for s in specs if s.name == "medium"), None) or next(
            (s for s in specs if s.name not in ("edge_empty", "edge_single") and s.kind is None), None)
        total -= 2
        if first is not None:
            name, shape, dtype, scale = first.name, first.shape, first.dtype, first.scale
            v.tier, v.kind = layout_tier, "layouts"
            base = task.make_inputs(Case(name, shape, dtype, rt.device, cs.case_seed(args, name, dtype), scale))
            variants = cs.layout_variants(base)
            total += len(variants)  # a 1-D problem has no transposed layout
            del base
            for variant in list(variants):
                emit("progress", message=f"{report['candidate']}: {name}:{variant}", progress=done, total=total)
                # pop: the variant's inputs are freed once its case is done, not at the end of the loop
                v.cases.append(v.run_case(task, name, shape, dtype, scale, 0, inputs=variants.pop(variant),
                                          variant=variant))
                done += 1
    v.tier, v.kind, v.values, v.hook = cs.CONTRACT, None, None, None
    RECORDER.origin = (cs.CONTRACT, None)  # the gradients and large offsets below are contract calls
    if args.get("gradients") and getattr(task.cand_mod, "SUPPORTS_BACKWARD", True) is False:
        v.notes.append("gradients not checked: the candidate declares SUPPORTS_BACKWARD = False (a forward-only "
                       "stage); validate the stage that implements backward with gradients=true")
    elif args.get("gradients"):
        for s in specs:
            name, shape, dtype = s.name, s.shape, s.dtype
            if name in failed_cases or s.tier != cs.CONTRACT:
                continue
            rec = v.run_gradients(task, name, shape, dtype)
            if rec is not None:
                v.cases.append(rec)
    if args.get("large_offsets"):
        v.cases.extend(_large_case(v, task, specs))
    if compiler is not None:
        report["target_compile"] = target_compile.finish(compiler, RECORDER.launch_specs(), v)
    report["cases"] = v.cases
    if not any(c.get("tier", cs.CONTRACT) == cs.CONTRACT for c in v.cases):
        # all([]) is True: a run whose every contract case was skipped (a subset naming a case that is not run, a
        # budget) must not read as a pass (issue 40's trial: "PASS ... 0/0 contract cases" for --only-cases tiles)
        v.find("no_cases", "-", "no contract case ran: " + ("; ".join(n for n in v.notes if "not run" in n)[:300]
                                                             or "the cases asked for were all left out"))
    findings = sorted(v.findings.values(), key=lambda f: (f["severity"] != "fail", PRIORITY.index(f["check"])
                                                          if f["check"] in PRIORITY else 99))
    report["findings"] = findings
    report["ok"] = all(c["ok"] for c in v.cases if c.get("tier", cs.CONTRACT) == cs.CONTRACT) and not any(
        f["severity"] == "fail" for f in findings)
    report["robustness"] = robustness_section(v)
    report["verdict_line"] = verdict_line(report)
    first_fix.explain(report, v.cand_path)  # fixes from the evidence: the variant, what it changes, the source
    interp_hints.annotate(report, rt.interpreter, v.cand_path)
    report["time_s"] = round(time.perf_counter() - t_start, 3)
    report["launched_kernels"] = sorted({k for k in _kernel_names()})
    report["composition"] = v.composer.summary()
    target_compile.dump(report, rt)
    return report


def _full_size(v: Validator, task: Task, args: dict[str, Any], compiler: Any, emit: Emit, who: str) -> dict[str, Any]:
    """The dry run at the problem's full size (dry_run.py): its launches' grids and int32 offsets checked here, their
    specialisations handed to the target compile first (compiled while the cases run); contract findings."""
    at, label = cs.full_size(task.ref_mod, task.kernelbench, args.get("sizes"))
    names = args.get("dtypes") or ([] if task.kernelbench else list(getattr(task.ref_mod, "DTYPES", None) or []))
    dtype = dtype_from_name(names[0]) if names else (kbench.native_dtype(task, at) if task.kernelbench
                                                       else torch.float32)
    # A step without a count: the dry run is a check, not a case run, and the cases' count starts at 0 after it (issue
    # 49: progress counts case runs and ends at its total); the interpreter's events inside it (the sampled programs)
    # go out as logs then, and a timeout still names this step.
    if v.log.dry_run_crashed:  # an earlier worker of this validation died in it (case_journal.py said so): not again
        return {"at": at, "label": label, "ok": False, "fallback": v.log.dry_run_crashed}
    emit("progress", message=f"{who}: dry run at the full size ({label})")
    v.log.step(True)  # a crash from here on is the dry run's: the server resumes the cases without it
    try:
        return _dry_run_checks(v, task, args, compiler, at, label, dtype)
    finally:
        v.log.step(False)


def _dry_run_checks(v: Validator, task: Task, args: dict[str, Any], compiler: Any, at: Any, label: str,
                    dtype: torch.dtype) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        dry = dry_run.run(task, at, dtype, v.device, label, cast=bool(args.get("dtypes")))
    except Exception as e:  # noqa: BLE001 - a fault of this check must not cost the validation
        v.notes.append(f"full-size checks not run: the dry run raised {type(e).__name__}: {str(e)[:200]}")
        return {"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    section: dict[str, Any] = {"at": at, "label": label, "ok": dry.ok, "launches": [
        {"kernel": la.name, "grid": list(la.grid), "repeats": la.repeats, "line": la.line} for la in dry.launches]}
    if not dry.ok:
        v.notes.append(f"full-size checks not run ({label}): {dry.fallback}; the launches of the sizes validated "
                       "below stand in (compiled for the target as before)")
        section["fallback"] = dry.fallback
        return section
    if compiler is not None:
        compiler.full_specs = [la.spec for la in dry.launches]
        compiler.submit([])
    findings, notes = dry_run.full_size_findings(dry)
    for f in findings:
        v.find(f["check"], "full size", f["message"], f["evidence"])
        v.findings[f["check"]]["fix"] = f["fix"]
    v.notes.extend(notes)
    section.update(findings=[f["message"] for f in findings], seconds=round(time.perf_counter() - t0, 2))
    v.notes.append(f"full size ({label}): {dry.total_launches} launch(es) of {len(dry.launches)} distinct "
                   "specialisation(s) found by a dry run on fake tensors; grids and int32 offsets checked there"
                   + ("; compiled for the target with the cases' launches" if compiler is not None else ""))
    return section


def _kernel_names() -> list[str]:
    return list(RECORDER.compiled.keys())


# Checks that report one cause: wrong values read at the absolute tolerance (mismatch) or, for outputs too small for
# it, relatively (relative_mismatch); the same wrong kernel fails both ways on cases of other magnitudes.
FAMILY = {"relative_mismatch": "mismatch"}


def _error_type(f: dict[str, Any]) -> str:
    ev = f.get("evidence")
    if isinstance(ev, dict) and ev.get("type"):
        return str(ev["type"])
    return str(f.get("message") or "").split(":", 1)[0].split(" ")[0]


def same_cause(contract: dict[str, Any], robust: dict[str, Any]) -> bool:
    """Whether a robustness failure is the contract failure again: the same check or FAMILY (and, for an exception,
    the same error type). The variants are built from the contract cases, so nothing tells them apart (issue 40: a missing
    division failed the main case and was also reported as "not robust to: NaN/inf input" with a NaN fix)."""
    if FAMILY.get(contract["check"], contract["check"]) != FAMILY.get(robust["check"], robust["check"]):
        return False
    return robust["check"] != "exception" or _error_type(contract) == _error_type(robust)


def robustness_section(v: Validator) -> list[dict[str, Any]]:
    """One finding per (kind, check) seen in robustness cases, failures first, each with its kind's fix; one that
    fails the same way as a contract case stays with that case (a note, not a finding of its own)."""
    found = [f for f in v.robustness.values() if f["severity"] == "fail"]
    contract = [f for f in v.findings.values() if f["severity"] == "fail"]
    own, again = [], []
    for f in found:
        c = next((c for c in contract if same_cause(c, f)), None)
        (again if c is not None else own).append((f, c))
    if again:
        kinds = ", ".join(dict.fromkeys(f["title"] for f, _ in again))
        c = again[0][1]
        v.notes.append(f"{kinds}: failed the same way as contract case {c['case']} ({c['check']}); not a separate "
                       "robustness finding: fix the contract failure first, then validate again")
    return sorted((f for f, _ in own), key=lambda f: (cs.REQUIRE_KINDS.index(f["kind"]) if f["kind"] in
                                                      cs.REQUIRE_KINDS else 9,
                                                      PRIORITY.index(f["check"]) if f["check"] in PRIORITY else 99))


def verdict_line(report: dict[str, Any]) -> str:
    """'pass', 'fail', or 'pass; not robust to: non-contiguous input, empty dims'."""
    head = "pass" if report["ok"] else "fail"
    titles = list(dict.fromkeys(f["title"] for f in report.get("robustness") or []))
    return head + (f"; not robust to: {', '.join(titles)}" if titles else "")


def _large_case(v: Validator, task: Task, specs: list[cs.Spec]) -> list[dict[str, Any]]:
    """Opt-in case whose element offsets pass 2**31, sized from free GPU memory first."""
    if v.device != "cuda":
        v.notes.append("large_offsets skipped: it needs a GPU (the interpreter cannot hold 2**31 elements)")
        return []
    base = next((s for s in specs if s.name == "large"), specs[0])
    shape, dtype, scale = base.shape, base.dtype, base.scale
    if not isinstance(shape, (tuple, list)) or not shape:
        v.notes.append("large_offsets skipped: the large case's shape is not a tuple of sizes")
        return []
    numel = math.prod(shape)
    factor = math.ceil((2**31 + 2**20) / max(1, numel))
    big_shape = (shape[0] * factor, *shape[1:])
    meta = Case("large_offsets", big_shape, dtype, "meta", 0)
    try:
        need = sum(t.numel() * t.element_size() for t in tensors(flatten(task.make_inputs(meta))))
    except Exception:  # noqa: BLE001
        need = math.prod(big_shape) * torch.empty((), dtype=dtype).element_size()
    free = torch.cuda.mem_get_info()[0]
    if need * 5 > free:
        v.notes.append(f"large_offsets skipped: needs about {need * 5 / 2**30:.0f} GiB, {free / 2**30:.0f} GiB free")
        return []
    v.emit("progress", message=f"{v.args['candidate_display']}: large_offsets {list(big_shape)}")
    rec = v.run_case(task, "large_offsets", big_shape, dtype, scale, 0, fp64=False)
    torch.cuda.empty_cache()
    return [rec]
