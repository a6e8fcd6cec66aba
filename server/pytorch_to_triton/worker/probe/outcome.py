"""What one probe call did and the rules that judge it: a refusal or a crash, an operator this environment lacks,
the outcome (outputs, error, out-of-bounds accesses), one probe's record, non-finite values and mismatches against
the reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .bounds import OutOfBounds

# Exceptions that mean the entry refused an input on purpose (a checked precondition), not a crash.
REFUSALS = (AssertionError, ValueError, NotImplementedError)


def refused(e: BaseException | None) -> bool:
    """The entry refused the input on purpose: a REFUSALS exception raised outside Triton's own code. One raised
    while Triton builds the kernel (`arange's range must be a power of 2` under the interpreter) is the kernel
    failing to compile, as a GPU reports it (a CompilationError): a crash, not a refusal (issue 26, held_out_14:
    lmcache's block-sparse attention at a head dim of 96)."""
    if not isinstance(e, REFUSALS):
        return False
    where = _raised_in(e)
    return not (where and _in_triton(where))


def does_not_compile(e: BaseException | None) -> bool:
    """The kernel could not be built at these sizes: Triton's CompilationError anywhere in the chain, or an error
    raised by Triton's language checks while it builds the kernel (`arange's range must be a power of 2` for a head
    dim of 17, `arange's end argument must be greater than the start` for an empty block), which the interpreter
    raises at run time where a GPU raises them at compile time."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if type(e).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
            return True
        where = _raised_in(e).replace("\\", "/")
        if "/triton/language/" in where:
            return True
        e = e.__cause__ or e.__context__
    return False


def missing_op(e: BaseException | None) -> bool:
    """A torch.ops lookup that failed: an operator of a compiled extension the worker never loaded (fbgemm's
    `torch.ops.fbgemm.jagged_softmax` without `import fbgemm_gpu`), a gap of this environment, not of the kernels."""
    if not isinstance(e, (AttributeError, RuntimeError)):
        return False
    return _raised_in(e).replace("\\", "/").endswith("torch/_ops.py")


def _raised_in(e: BaseException) -> str:
    """The file of the innermost frame an exception was raised in ('' without a traceback)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__) if e.__traceback__ is not None else []
    return frames[-1].filename if frames else ""


def _in_triton(filename: str) -> bool:
    import triton

    root = Path(triton.__file__).resolve().parent
    try:
        Path(filename).resolve().relative_to(root)
        return True
    except ValueError:
        return False


class Poisoned(Exception):
    """An earlier call left the CUDA context unusable (an illegal memory access): no later call can run."""
DEFAULT_BUDGET_S = 240.0


@dataclass
class Outcome:
    """One call: outputs (float64 copies on the CPU) or the error."""

    outputs: list[torch.Tensor] | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    dtypes: list[torch.dtype] | None = None  # the outputs' own dtypes, before the float64 copies
    new_specs: list[str] = field(default_factory=list)  # launch specialisations this call launched first (their keys)

    @property
    def oob(self) -> bool:
        """The call touched memory outside its tensors."""
        e: BaseException | None = self.error
        seen: set[int] = set()
        while e is not None and id(e) not in seen:  # a chain can loop back on itself
            if isinstance(e, OutOfBounds) or "out-of-bounds" in str(e):
                return True
            seen.add(id(e))
            e = e.__cause__ or e.__context__
        return False


@dataclass
class Probe:
    """What one probe did: the variants it ran, those that failed, or why it could not run."""

    name: str
    covered: str
    ran: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_run: str = ""
    # Failures on inputs outside the default contract, each with its robustness `kind` (tier_rules.py): "structure"
    # (only at an odd size where the example's is even, the even size next to it passing: GEGLU's halves,
    # rotate-half RoPE), "1d" (only with a strided 1-D tensor), "weight" (only through a tensor that does not carry
    # the batch), "lastdim" (only with a strided last dim), "precision" (TF32 dots), "empty" (a batch of 0),
    # "extreme" (the magnitude probe's values), "defaults" (the entry called without its optional arguments). The
    # server (audit/evidence.py) tiers them against the contract: robustness findings, or P0s where the contract
    # says the callers give such inputs.
    aside: list[dict[str, Any]] = field(default_factory=list)

    def layout_aside(self, failures: list[dict[str, Any]], kind: str, why: str) -> None:
        """Move `failures` (records of self.failures) aside as robustness `kind`: a layout the callers do not give
        (tier_rules), an out-of-bounds access under it too, said so; `why` follows each record's detail."""
        for f in failures:
            self.failures.remove(f)
            oob = "; it reads or writes out of bounds under this layout (robustness, as the layout is)" \
                if f.get("oob") else ""
            self.aside.append({**f, "kind": kind,
                               "detail": f"{f.get('detail') or f.get('error') or f['what']}; {why}{oob}"[:600]})

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the protocol."""
        return {"name": self.name, "covered": self.covered, "ran": self.ran, "failures": self.failures,
                "notes": self.notes, "not_run": self.not_run, "aside": self.aside}


def _cuda_usable() -> bool:
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:  # noqa: BLE001 - a sticky CUDA error
        return False


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _finite_inputs(inputs: list[Any]) -> bool:
    # float8 has no isfinite on the CPU (modelopt's fp8 dequantizer stopped every probe): compare in float32
    return all(torch.isfinite(t.float() if t.element_size() == 1 else t).all() for t in _tensors(inputs)
               if t.is_floating_point() and t.numel())


def _nonfinite(outs: list[torch.Tensor]) -> str:
    for i, t in enumerate(outs):
        if t.is_floating_point() and t.numel() and not torch.isfinite(t).all():
            bad = (~torch.isfinite(t)).sum().item()
            return f"output {i} has {bad} of {t.numel()} non-finite value(s) (NaN or inf) from finite inputs"
    return ""


def _mismatch(a: list[torch.Tensor], b: list[torch.Tensor], rtol: float, atol: float) -> str:
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.shape != y.shape:
            return f"output {i}: shape {tuple(x.shape)} vs {tuple(y.shape)}"
        if not x.numel():
            continue
        if not x.is_floating_point():
            if not torch.equal(x, y):
                return f"output {i}: {(x != y).sum().item()} of {x.numel()} integer value(s) differ"
            continue
        close = torch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            err = (x - y).abs().nan_to_num(nan=float("inf")).max().item()
            return (f"output {i}: {(~close).sum().item()} of {x.numel()} value(s) differ (max abs diff {err:.3g}, "
                    f"rtol {rtol:g}, atol {atol:g})")
    return ""


def _mismatch_each(a: list[torch.Tensor], b: list[torch.Tensor], tols: list[tuple[float, float]]) -> str:
    """_mismatch with a tolerance per output."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        rtol, atol = tols[i] if i < len(tols) else tols[-1]
        diff = _mismatch([x], [y], rtol, atol)
        if diff:
            return diff.replace("output 0", f"output {i}", 1)
    return ""
