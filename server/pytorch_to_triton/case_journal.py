"""Server side of per-case progress (worker/validation/case_log.py): what finished, what was running, and resuming.

Every validation call keeps the worker's per-case events. When the worker dies inside a case (a segfault,
os._exit, a CUDA fault that poisons its context), the case that was running is marked: in the *reference* it is
the harness's fault (its inputs, or the reference itself), so the case is skipped with a note and no candidate is
blamed; in the *candidate* it is that candidate's failure for that case only (`crashed`, or `cuda_fatal` for a
poisoned context). A fresh worker then runs the cases not yet run (`resume`), within the same time budget; the
next candidates skip a case whose reference crashed. On a timeout nothing is resumed (the budget is spent), but
the finished cases are kept and the report says which case was running, on which side, since when.

A resume costs a fresh worker: the warm spare's take-over when it has finished starting, a whole start-up (torch,
CUDA, Triton: 4-8 s on an H100) when the spare was itself just started. A candidate that crashes on every case
(os._exit at import or on every call, a segfault) cost 5-9 of them, 35-40 s per validation on the H100 (issue 47).
So a candidate-side crash is resumed only when the candidate finished a case since its previous crash (or since it
started): a crash with nothing finished before it ends the candidate there, and the report says which cases did not
run. A crash in one case among passing ones (the containment of issue 25) still costs one replacement.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .errors import WorkerError
from .schemas import CandidateReport, CaseResult, Finding

POISONED = "ContextPoisoned"  # worker/validation/case_log.py's error type (and the client's kind for an exiting worker)
DRY_RUN = "full-size dry run"  # worker/validation/case_log.py's key of the dry run before the cases
RESUMABLE = ("crashed", POISONED)
MAX_RESUMES = 8  # worker replacements per candidate; a candidate that crashes on every case stops there

Describe = Callable[[WorkerError], tuple[str, dict[str, Any]]]
Call = Callable[[dict[str, Any], float, Callable[[dict[str, Any]], None]], dict[str, Any]]


def _utc(t: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(t))


def _split(key: str) -> tuple[str, str, int]:
    label, dtype, trial = (key.rsplit("|", 2) + ["", "0"])[:3]
    return label, dtype, int(trial) if trial.isdigit() else 0


class ReferenceCrashes:
    """Cases whose reference crashed a worker, kept across the candidates of one validation call."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.labels: set[str] = set()
        self.notes: list[str] = []

    def resume(self) -> dict[str, Any] | None:
        """The resume arguments a new candidate starts with (skip these cases), or None when there are none."""
        if not self.labels:
            return None
        return {"records": dict(self.records), "reference_crashed": sorted(self.labels), "notes": list(self.notes)}


class CaseJournal:
    """The per-case events of one candidate's validation, across the workers it took."""

    def __init__(self, sink: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.sink = sink  # each finished case as it arrives (the task's case log: a kill loses none of them)
        self.records: dict[str, dict[str, Any]] = {}
        self.findings: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.running: dict[str, Any] | None = None
        self.replaced: list[dict[str, Any]] = []
        self.error: dict[str, Any] | None = None  # the first candidate-side crash, for the report's `error`
        self.finished_since_crash = 0  # cases finished since the last candidate-side crash (or the start)
        self.dry_run_crashed: str | None = None  # how the full-size dry run died, when it took a worker with it

    def see(self, msg: dict[str, Any]) -> None:
        """Feed every message of the call; keeps the "case" ones."""
        if msg.get("type") != "case":
            return
        if msg.get("step_done"):  # the dry run ended: no case is running (it is no case: nothing to record)
            self.running = None
            return
        if "done" in msg:
            self.records[str(msg.get("key"))] = msg["done"]
            self.finished_since_crash += 1
            if self.sink is not None:
                try:
                    self.sink(msg["done"])
                except OSError:
                    pass  # the case log is a convenience; never fail a validation over it
            if "findings" in msg:
                self.findings = list(msg["findings"])
            if "notes" in msg:
                self.notes = list(msg["notes"])
            self.running = None
        else:
            self.running = {"key": str(msg.get("key")), "case": str(msg.get("case")), "phase": msg.get("phase"),
                            "t": float(msg.get("t") or time.time())}

    def worth_resuming(self) -> bool:
        """Whether a fresh worker should run the rest after the crash now marked in `running`: always after a
        reference-side crash (the harness's fault: the case is skipped for every candidate); after a candidate-side
        one only when a case finished since the candidate's previous crash or its start; always after the dry run's
        (a check before the cases, not run again: its crash must not cost them)."""
        run = self.running
        return run is not None and (run["phase"] in ("reference", "dry_run") or self.finished_since_crash > 0)

    def stop_note(self) -> str:
        """What the report says when a candidate's crash ended it (worth_resuming was False)."""
        label = _split(self.running["key"])[0] if self.running else "?"
        first = not any(r["phase"] == "candidate" for r in self.replaced)  # the dry run's crash is not the candidate's
        return (f"the candidate crashed the worker in case {label} " +
                ("before any of its cases finished" if first else "again, with no case finished since its last crash")
                + ": its remaining cases were not run (each would cost a fresh worker). Fix this case first, or "
                "leave it out with only_cases to see the others")

    def mark_crash(self, e: WorkerError, crashes: ReferenceCrashes, describe: Describe | None = None) -> dict[str, Any]:
        """Record the running case as crashed (reference: skipped, the harness's fault; candidate: failed).
        `describe(e)` gives the crash's message and error dict (the user's file:line from the stack dump)."""
        run = self.running
        assert run is not None
        label, dtype, trial = _split(run["key"])
        detail, err = describe(e) if describe is not None else (str(e), {"type": e.kind, "message": str(e)})
        what = ("lost its CUDA context (a device-side assert or an illegal address)" if e.kind == POISONED else
                f"crashed the worker ({str(e).split(' during:')[0]})")
        if run["phase"] == "dry_run":
            return self._dry_run_crash(e, detail, what)
        if run["phase"] == "reference":
            rec = {"name": label, "dtype": dtype, "trial": trial, "ok": True, "skipped": True,
                   "harness_fault": f"the reference {what}"}
            note = (f"case {label}: the reference {what}; the harness's inputs or the reference are at fault, not the "
                    "candidate: the case was skipped and the other cases ran in a fresh worker")
            crashes.records[run["key"]] = rec
            crashes.labels.add(label)
            if note not in crashes.notes:
                crashes.notes.append(note)
            self.notes.append(note)
        else:
            self.finished_since_crash = 0
            check = "cuda_fatal" if e.kind == POISONED else "crashed"
            msg = f"{detail} [in case {label} only: the other cases ran in a fresh worker]"
            err = {**err, "type": check, "message": msg, "phase": "run", "case": label}
            rec = {"name": label, "dtype": dtype, "trial": trial, "ok": False, "error": err}
            self.error = self.error or err
            old = next((f for f in self.findings if f.get("check") == check), None)
            if old is not None:
                old["count"] = int(old.get("count") or 1) + 1
            else:
                fix = ("an index or assert the kernel trips on this case's inputs: run this case alone "
                       f"(only_cases=['{label.split(':')[0]}']) with TRITON_DEBUG=1 to see which" if check == "cuda_fatal"
                       else "the process died in this case: see error.stderr_tail of the case (a segfault, os._exit)")
                where = {k: err[k] for k in ("file", "line", "function") if k in err}
                self.findings.append({"check": check, "severity": "fail", "case": label, "message": msg, "count": 1,
                                      "fix": fix, "evidence": where or None})
        self.records[run["key"]] = rec
        event = {"case": label, "phase": run["phase"], "kind": e.kind, "at": _utc(time.time())}
        self.replaced.append(event)
        self.running = None
        return event

    def _dry_run_crash(self, e: WorkerError, detail: str, what: str) -> dict[str, Any]:
        """The full-size dry run (the reference and the candidate on fake tensors, before any case) took the worker:
        a note, no case and no candidate failure (data-less tensors are not what a GPU gets); the cases run in a
        fresh worker without it."""
        self.dry_run_crashed = (f"the dry run on fake tensors {what}; the full-size checks were not run and the "
                                f"cases ran in a fresh worker [{detail[:300]}]")
        self.notes.append(f"full-size checks not run: {self.dry_run_crashed}")
        event = {"case": DRY_RUN, "phase": "dry_run", "kind": e.kind, "at": _utc(time.time())}
        self.replaced.append(event)
        self.running = None
        return event

    def resume(self, crashes: ReferenceCrashes) -> dict[str, Any]:
        """The `resume` argument of the next worker: every finished or crashed case, the findings and notes (and how
        the dry run died, so that it is not run again)."""
        out = {"records": {**crashes.records, **self.records}, "findings": self.findings, "notes": self.notes,
               "reference_crashed": sorted(crashes.labels)}
        if self.dry_run_crashed:
            out["dry_run_crashed"] = self.dry_run_crashed
        return out

    def partial(self, now: float | None = None) -> dict[str, Any]:
        """What finished, and the case that was running (with its side and since when), for a failed call."""
        now = time.time() if now is None else now
        run = self.running
        running = None
        if run is not None:
            label, dtype, trial = _split(run["key"])
            running = {"case": label, "dtype": dtype, "trial": trial, "phase": run["phase"], "since": _utc(run["t"]),
                       "for_s": round(now - run["t"], 1)}
        return {"cases": list(self.records.values()), "findings": self.findings, "notes": self.notes,
                "running": running}


def validate_resuming(call: Call, args: dict[str, Any], timeout_s: float, on_event: Callable[[dict[str, Any]], None],
                      crashes: ReferenceCrashes, describe: Describe | None = None,
                      sink: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """One candidate's validation through `call(args, timeout_s, on_event)`, resumed in a fresh worker after a crash
    inside a case. A WorkerError that cannot be resumed carries `partial` (CaseJournal.partial), a cancelled one
    too; `sink` gets each finished case as it arrives."""
    journal = CaseJournal(sink)

    def see(msg: dict[str, Any]) -> None:
        journal.see(msg)
        on_event(msg)

    deadline = time.monotonic() + timeout_s
    resume = crashes.resume()
    for attempt in range(MAX_RESUMES + 1):
        left = deadline - time.monotonic()
        try:
            res = call({**args, "resume": resume} if resume else args, max(1.0, left), see)
        except WorkerError as e:
            if e.kind == "cancelled":
                e.partial = journal.partial()  # type: ignore[attr-defined]
                raise
            resumable = e.kind in RESUMABLE and journal.running is not None
            if resumable and journal.worth_resuming() and attempt < MAX_RESUMES and left > 2:
                journal.mark_crash(e, crashes, describe)
                resume = journal.resume(crashes)
                continue
            if resumable and not journal.worth_resuming():
                journal.notes.append(journal.stop_note())
            e.partial = journal.partial()  # type: ignore[attr-defined]
            raise
        if journal.replaced:
            res["worker_replacements"] = journal.replaced
            if journal.error is not None and not res.get("error"):
                res["error"] = journal.error
            res.setdefault("notes", []).append(
                f"the worker was replaced {len(journal.replaced)} time(s) during this validation (" + "; ".join(
                    f"{r['case']}: {r['phase']} {r['kind']}" for r in journal.replaced) + "); the cases after each "
                "ran in a fresh worker")
        return res
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def with_partial(report: CandidateReport, e: WorkerError) -> CandidateReport:
    """A failed call's report with the cases that finished, and the running case named (its side, since when)."""
    part = getattr(e, "partial", None)
    if not part:
        return report
    run = part.get("running")
    findings = list(report.findings)
    cases = [CaseResult.model_validate(r) for r in part.get("cases") or []]
    if run is not None and findings:
        f0 = findings[0]
        findings[0] = f0.model_copy(update={
            "case": run["case"],
            "message": f"{f0.message} [case {run['case']} ({run['dtype']}, trial {run['trial']}) was running, its "
                       f"{run['phase']} side, since {run['since']} ({run['for_s']:.1f} s)]"})
        cases.append(CaseResult(name=run["case"], dtype=run["dtype"] or "?", trial=run["trial"], ok=False,
                                error={"type": e.kind, "message": str(e)[:400], "phase": run["phase"]},
                                running_since=run["since"], running_for_s=run["for_s"]))
    findings += [Finding.model_validate(f) for f in part.get("findings") or []]
    error = report.error
    if run is not None and isinstance(error, dict) and "case" not in error:
        error = {**error, "case": run["case"]}  # the error names the case it came from, as a resumed crash's does
    n_done = len(part.get("cases") or [])
    notes = [*part.get("notes", []), f"{n_done} case(s) had finished before the {e.kind}: their results are kept"]
    return report.model_copy(update={"cases": cases, "findings": findings, "notes": notes, "error": error})
