"""audit_kernel's probes on a KernelBench-form task (references/task-format.md, "Form (b): KernelBench").

The entry is ModelNew(*get_init_inputs()) called on get_inputs(); the problem's Model is the probes' reference. Both
are built by kernelbench.py exactly as run_validation builds them (the same seed, the reference's trainable
parameters perturbed and loaded into ModelNew, so the two hold the same weights), at the sizes each probe asks for.

Sizes are the problem's module-level constants (sizes.py), never invented tensor shapes: the example runs at
run_validation's main sizes (cases.main_sizes: the problem's own on a GPU, shrunk for the interpreter on the CPU,
the sidecar's [sizes] / [sizes.interpreter] or [audit] shape pinned on top); the sizes probe moves one constant at a
time and the rows probe takes a prefix of the batch only when that is the problem at a smaller batch constant
(probe_inputs.kb_*). The layout, magnitude and sentinel probes change get_inputs()'s values and layouts, not sizes.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from ..validation import cases as cs
from ..validation import sizes as sz
from ..validation.kernelbench import native_dtype
from ..validation.tasks import Case, TaskError, dtype_from_name, dtype_name
from . import probe_inputs as pi

# Probes that mean nothing for a KernelBench problem, and why (the report's not_run).
NOT_FOR_KERNELBENCH = {
    "dtype": "a KernelBench problem fixes its dtypes in get_inputs() and the model; run_validation with dtypes=[...] "
             "checks other dtypes (inputs and parameters cast together)",
}


def _bound(model: Any, forward: Any, cls: str) -> Any:
    """A callable running the model built for the sizes now in effect, with forward's signature (minus self), so
    the sentinel and defaults probes read ModelNew.forward's parameters and the report names it."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with torch.no_grad():
            return model()(*args, **kwargs)

    try:
        sig = inspect.signature(forward)
        call.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    call.__name__, call.__qualname__ = "forward", f"{cls}.forward"
    call.__wrapped__ = forward  # type: ignore[attr-defined]  # the entry's line in the report
    return call


class KernelBenchHarness:
    """The example call of a KernelBench task: sizes, inputs, the entry and the reference."""

    def __init__(self, ref_mod: ModuleType, ref_path: Path, target: Path, device: str, args: dict[str, Any]):
        from ..confine.refseal import seal
        from ..validation.loader import kernelbench_task

        if args.get("entry"):
            raise TaskError("import", f"{ref_path.name} is a KernelBench problem: the probes run ModelNew, not "
                            f"{args['entry']!r}; for another entry give a harness with make_inputs(case) and ENTRY "
                            "(references/audit-guide.md, 'Probes')", usage=True)
        shape = args.get("shape")
        if shape is not None and not isinstance(shape, dict):
            raise TaskError("inputs", f"{ref_path.name} is a KernelBench problem: its example sizes are module-level "
                            f"constants, so [audit] shape is a table of them ({sz.fmt(sz.size_constants(ref_mod))}), "
                            f"not {shape!r}", usage=True)
        seal(ref_mod)  # as load_task does, before the candidate is imported
        self.task = kernelbench_task(ref_mod, ref_path, target, device)
        self.mod, self.device = ref_mod, device
        pinned = {**(args.get("sizes_interpreter") or {} if device != "cuda" else {}), **(args.get("sizes") or {}),
                  **(shape or {})}
        self.start = {**sz.size_constants(ref_mod), **sz.check_sizes(ref_mod, pinned)}
        self.sizes, notes = cs.main_sizes(ref_mod, device, pinned)
        kb = self.task.kb
        if args.get("dtype"):
            kb.cast = True
            self.dtype = dtype_name(dtype_from_name(args["dtype"]))
        else:
            self.dtype = dtype_name(native_dtype(self.task, self.sizes))
        where = ("the problem's own sizes" if self.sizes == self.start else
                 f"shrunk from {sz.fmt(self.start)} for the interpreter, as run_validation does (a GPU runs the "
                 "problem's own sizes)")
        self.notes = [f"KernelBench form: ModelNew(*get_init_inputs()) on get_inputs() at {sz.fmt(self.sizes)} "
                      f"({where}); the problem's Model is the reference"]
        self.notes += [n for n in notes if not n.startswith("no GPU:")]
        self.entry = _bound(lambda: self.task.cand_fn, self.task.cand_mod.ModelNew.forward, "ModelNew")
        self.reference = _bound(lambda: self.task.ref_fn, ref_mod.Model.forward, "Model")

    def make_inputs(self, case: Case) -> list[Any]:
        """get_inputs() at the case's sizes (its shape, a sizes dict), the models built for them."""
        return self.task.make_inputs(case)

    def reset(self) -> None:
        """The models back at the example's sizes (nothing rebuilt when they are there already)."""
        self.task.kb.prepare(self.task, self.sizes, dtype_from_name(self.dtype))

    def parameters(self) -> str:
        """How the two models' parameters were set (kernelbench.py's words)."""
        return self.task.kb.parameters

    def boundary_sizes(self) -> tuple[dict[str, dict[str, int]], list[str]]:
        """label -> sizes for the sizes probe, and the variants left out (probe_inputs.kb_boundary_sizes)."""
        return pi.kb_boundary_sizes(self.mod, self.sizes)

    def batch(self, b: int) -> tuple[str | None, str]:
        """The batch constant of the rows probe, or why a prefix of the batch is another problem."""
        return pi.kb_batch(self.mod, self.sizes, b)
