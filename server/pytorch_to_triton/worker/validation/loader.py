"""Load a task: the reference (and a candidate) imported, their entries resolved; a KernelBench problem gets the
state that builds its models at each case's sizes (kernelbench.py). Above tasks.py and kernelbench.py, so neither
needs the other."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ..confine import refseal
from .kernelbench import KernelBenchState
from .tasks import (
    ImportFailure,
    Task,
    TaskError,
    check_signatures,
    is_kernelbench,
    load_module,
    resolve_candidate_entry,
    resolve_reference_entry,
)


def load_task(ref_path: Path, cand_path: Path | None, ref_entry: str | None, cand_entry: str | None,
              device: str) -> Task:
    """Import the reference (and a candidate) and resolve their entries."""
    try:
        ref_mod = load_module(ref_path, "ref")
    except TaskError:
        raise
    except BaseException as e:  # noqa: BLE001 - the user's import error is data
        raise ImportFailure("reference", e) from e
    refseal.seal(ref_mod)  # before the candidate is imported: PatchWatch puts back whatever it changes
    if is_kernelbench(ref_mod):
        return kernelbench_task(ref_mod, ref_path, cand_path, device)
    if not callable(getattr(ref_mod, "make_inputs", None)):
        raise TaskError("import", f"{ref_path.name} has no make_inputs(case) and is not in KernelBench form "
                        "(Model, get_inputs); see references/task-format.md", usage=True)
    r_entry = resolve_reference_entry(ref_mod, ref_entry)
    ref_fn = getattr(ref_mod, r_entry)
    task = Task(ref_mod, ref_fn, None, None, False, ref_path, cand_path)
    if cand_path is not None:
        try:
            cand_mod = load_module(cand_path, "cand")
        except BaseException as e:  # noqa: BLE001
            raise ImportFailure("candidate", e) from e
        c_entry = resolve_candidate_entry(cand_mod, cand_entry, r_entry)
        task.cand_fn, task.cand_mod = getattr(cand_mod, c_entry), cand_mod
        check_signatures(ref_fn, task.cand_fn)
    return task


def kernelbench_task(ref_mod: ModuleType, ref_path: Path, cand_path: Path | None, device: str) -> Task:
    """A KernelBench problem (its module imported and sealed) with a candidate defining ModelNew. The models are
    built by Task.prepare / make_inputs at the sizes of the case that runs (never at a full size the run does not
    use): ref_fn, ref_model and cand_fn are None until then. audit_kernel's probes load a task this way too."""
    cand_mod = None
    if cand_path is not None:
        try:
            cand_mod = load_module(cand_path, "cand")
        except BaseException as e:  # noqa: BLE001
            raise ImportFailure("candidate", e) from e
        if not hasattr(cand_mod, "ModelNew"):
            raise TaskError("import", f"{cand_path.name} defines no ModelNew (KernelBench form)", usage=True)
    task = Task(ref_mod, None, None, cand_mod, True, ref_path, cand_path)
    task.kb = KernelBenchState(ref_mod, cand_mod, device)
    return task
