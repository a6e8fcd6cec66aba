"""Per-case progress the server keeps, and the resume state of a validation whose worker was replaced.

The worker sends, for every case (protocol.py, type "case"):
  {"key", "case", "phase": "reference"|"candidate", "t"}   when a side starts running it
  {"key", "case", "done": record, "findings"?, "notes"?}   when it finished (findings/notes only when changed)
  {"key": DRY_RUN, "case": DRY_RUN, "phase": "dry_run", "t"} / {..., "step_done": true}   around the full-size dry run
so that a worker that dies (segfault, os._exit, a CUDA fault that poisons its context) or times out leaves the
server every finished case and the one that was running, on which side. The server (case_journal.py) then starts
a fresh worker and passes `resume`: the finished records (not run again), the crashed case's record and the
findings and notes so far.

A CUDA error that poisons the context (a device-side assert, an illegal address) is raised as ContextPoisoned as
soon as it is seen, naming the case and the side: every later case in this process would fail with it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

# What PyTorch says when the CUDA context is gone for good (the process must be replaced).
CUDA_FATAL = re.compile(r"device-side assert|illegal memory access|an illegal instruction|unspecified launch failure|"
                        r"misaligned address|cudaErrorLaunchFailure|CUDA error: an illegal", re.I)
POISONED = "ContextPoisoned"  # the error type the server sees (WorkerError.kind)


class ContextPoisoned(RuntimeError):
    """A fatal CUDA error in one case: the worker must go; `case` and `phase` say where it happened."""

    def __init__(self, case: str, phase: str, message: str):
        super().__init__(f"CUDA context poisoned in case {case} ({phase}): {message[:600]}")
        self.case, self.phase = case, phase


def is_cuda_fatal(exc: BaseException, device: str) -> bool:
    """True for an error after which no CUDA call of this process can succeed."""
    if device != "cuda":
        return False
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if CUDA_FATAL.search(f"{type(e).__name__}: {e}"):
            return True
        e = e.__cause__ or e.__context__
    return False


# The step before the cases (run_validation._full_size): the full-size dry run on fake tensors. It is a check, not a
# case: a worker it crashes is replaced, the cases run in the fresh one, and the dry run is not tried again.
DRY_RUN = "full-size dry run"


def key(label: str, dtype: str, trial: int) -> str:
    """The identity of one case run, the same in every worker of a validation."""
    return f"{label}|{dtype}|{trial}"


class CaseLog:
    """One validation's per-case events, and what a previous worker of it finished (args["resume"])."""

    def __init__(self, emit: Callable[..., None], resume: dict[str, Any] | None, device: str):
        self.emit = emit
        self.device = device
        resume = resume or {}
        self.records: dict[str, dict[str, Any]] = dict(resume.get("records") or {})
        self.findings: list[dict[str, Any]] = list(resume.get("findings") or [])
        self.notes: list[str] = list(resume.get("notes") or [])
        self.reference_crashed: set[str] = set(resume.get("reference_crashed") or [])  # case labels
        self.dry_run_crashed: str | None = resume.get("dry_run_crashed")  # how an earlier worker's dry run died
        # (label, dtype) -> the record of a case whose candidate side killed an earlier worker: its other trials are
        # not run again (each crash costs a fresh worker; issue 47), they are reported from that record.
        self.crashed = {(r.get("name"), r.get("dtype")): r for r in self.records.values()
                        if (r.get("error") or {}).get("type") in ("crashed", "cuda_fatal")}
        self._sent: tuple[Any, ...] = (len(self.notes), tuple((f["check"], f.get("count")) for f in self.findings))

    def prior(self, case_key: str) -> dict[str, Any] | None:
        """The record an earlier worker of this validation finished (or the crashed case's), else None; for another
        trial of a case that crashed a worker, that crash's record (not run again)."""
        rec = self.records.get(case_key)
        if rec is not None or not self.crashed:
            return rec
        label, dtype, trial = case_key.rsplit("|", 2)
        crashed = self.crashed.get((label, dtype))
        if crashed is None:
            return None
        err = dict(crashed.get("error") or {})
        err["message"] = (f"not run: this case crashed the worker in trial {crashed.get('trial')} "
                          f"({str(err.get('message', ''))[:200]})")
        return {**crashed, "trial": int(trial), "error": err}

    def phase(self, case_key: str, label: str, phase: str) -> None:
        """Tell the server which side of which case starts running now."""
        self.emit("case", key=case_key, case=label, phase=phase, t=time.time())

    def step(self, running: bool) -> None:
        """Tell the server that the dry run starts (a crash now is the dry run's) or has ended."""
        if running:
            self.emit("case", key=DRY_RUN, case=DRY_RUN, phase="dry_run", t=time.time())
        else:
            self.emit("case", key=DRY_RUN, case=DRY_RUN, step_done=True)

    def done(self, case_key: str, rec: dict[str, Any], findings: dict[str, dict[str, Any]], notes: list[str]) -> None:
        """Send a finished case; the findings and notes ride along only when they changed since the last one."""
        sig = (len(notes), tuple((f["check"], f.get("count")) for f in findings.values()))
        extra: dict[str, Any] = {}
        if sig != self._sent:
            extra = {"findings": list(findings.values()), "notes": list(notes)}
            self._sent = sig
        self.emit("case", key=case_key, case=rec.get("name"), done=rec, **extra)

    def check(self, exc: BaseException, label: str, phase: str) -> None:
        """Raise ContextPoisoned when `exc` left the CUDA context unusable."""
        if is_cuda_fatal(exc, self.device):
            raise ContextPoisoned(label, phase, f"{type(exc).__name__}: {exc}") from exc
