"""The two tiers, one notion for run_validation and audit_kernel (references/task-format.md, "Tiers"; issue 35).

- contract: what the callers give (the problem's own inputs; for an audited library file, the inputs its wrappers
  and call sites admit). pass/fail, and an audit's P0/P1, come from contract inputs alone.
- robustness: inputs the reference accepts but the callers never give. A failure there is a named finding with its
  input and its fix, reported beside the verdict, never a failure of the verdict and never an audit P0.

A robustness input has a kind. The validator builds four (layouts, empty, nan, extreme); the audit's probes see
finer ones (a strided weight, a strided last dimension, a size that breaks the example's parity, TF32 dots), each a
sub-kind of a broader one (PARENT), and two of their own: the magnitude probe's values (x100, shifted by -120) are
"extreme", as the validator's; the entry called without its optional arguments is "defaults", contract only where the
file's own callers call it so (audit/contract.py reads the call sites): requiring the broad kind (`require = ["layouts"]`, strict) requires its sub-kinds
too. Pure Python: the server (no torch) and the worker (no pydantic) both import it.

Issue 45 (one judge):
- layouts: a layout the example gives contiguous is robustness ("layouts", or the finer kind the layout probe saw),
  whether or not the tensor carries the batch, and an out-of-bounds access under it too; contract where the task,
  the harness or the sidecar requires it, or where the example itself passes that tensor as a view (layout_kind);
- with a task reference, run_validation's contract cases are the contract: every input the audit's probes invent is
  robustness, of the kind probe_kind names (a prefix of the batch, sizes the task does not give, sentinels,
  bfloat16, a backward the task does not compare, and the kinds above), contract only where required;
- a specialisation takes the tier of the sizes that launched it (the worker's LaunchRecorder.origin): a compile
  failure at a robustness size (empty, a size that breaks the kernel's structure) is a robustness finding.
"""

from __future__ import annotations

from collections.abc import Iterable

CONTRACT, ROBUSTNESS = "contract", "robustness"
# What the validator's `require` may name (the sidecar, args["require"], strict=true = all four).
REQUIRE_KINDS = ("layouts", "empty", "nan", "extreme")
# The validator's layout variants of a case (cases.layout_variants' names): a case "shrunk" runs them as
# "shrunk:transposed" and "shrunk:strided", the labels its findings, only_cases and reproduce lines use.
LAYOUT_VARIANTS = ("transposed", "strided")
# The audit's finer kinds (probe variants outside the default contract) and the broad kind each belongs to.
PARENT = {"weight": "layouts", "lastdim": "layouts", "1d": "layouts", "upstream": "layouts", "structure": "structure",
          "precision": "precision", "defaults": "defaults",
          # issue 45: the probes' own inputs when a task's validation judged the contract (probe_kind)
          "rows": "rows", "sizes": "sizes", "sentinel": "sentinel", "dtype": "dtype", "grad": "grad"}
AUDIT_KINDS = (*REQUIRE_KINDS, *PARENT)
TITLES = {"layouts": "non-contiguous input", "empty": "empty dims", "nan": "NaN/inf input",
          "extreme": "extreme magnitudes",
          "weight": "a non-contiguous weight or buffer (a tensor that does not carry the batch)",
          "lastdim": "a strided last dimension (a transposed view)",
          "1d": "a strided 1-D weight or bias",
          "upstream": "an expanded (stride-0) output gradient, as out.sum().backward() hands the backward",
          "structure": "sizes that break the example's structure (odd where it is even)",
          "precision": "fp32 accuracy from fp32 dots (IEEE where Triton's default is TF32)",
          "defaults": "the entry called without its optional arguments",
          "rows": "a prefix of the batch (fewer rows than the task's cases)",
          "sizes": "sizes the task's cases do not give (block boundaries, 1, 17)",
          "sentinel": "sentinel values (ignore_index, padding) in the integer inputs",
          "dtype": "bfloat16 inputs against the float32 result",
          "grad": "gradients (a backward the task's validation does not compare)"}
FIXES = {
    "layouts": "call .contiguous() on the inputs in the wrapper (it costs nothing on contiguous input), or pass "
               "the strides into the kernel (stride_* arguments) instead of indexing rows by row * n_cols",
    "empty": "return early when x.numel() == 0 (an empty output of the right shape): triton.next_power_of_2(0) "
             "is 0 and tl.arange(0, 0) does not compile",
    "nan": "propagate NaN: tl.maximum/tl.minimum drop it (tl.maximum(nan, 0) is 0); use "
           "tl.where(x != x, x, tl.maximum(x, 0.0)), and keep masked 'other' values out of the result",
    "extreme": "subtract the row max before exp, accumulate in fp32, and avoid forming x * x or exp(x) of large "
               "values before they are scaled",
    "weight": "assert w.is_contiguous() in the entry (a clear error), or pass its strides to the kernel",
    "lastdim": "assert x.stride(-1) == 1 in the entry (a clear error), or x = x.contiguous() when it is not",
    "1d": "weight = weight.contiguous() in the entry (free for a dense parameter), or pass weight.stride(0)",
    "upstream": "grad_output = grad_output.contiguous() at the top of the backward (autograd gives no layout "
                "guarantee), or pass its strides to the kernel",
    "structure": "assert the size is even in the entry (a clear error), or handle the odd tail",
    "precision": 'tl.dot(a, b, input_precision="ieee") where fp32 accuracy is the contract',
    "defaults": "give each documented default a value before it is used (a None default is replaced, not used), or "
                "make the argument required if no caller may leave it out",
}
# What the audit assumes of its callers when neither the file, the harness nor the sidecar says otherwise: one
# line per robustness kind, said in every finding's "assumed:" line so a user can dispute it (`[audit] require`).
DEFAULT_ASSUMED = {
    "layouts": "inputs the example passes contiguous stay contiguous",
    "weight": "tensors that do not carry the batch (weights, buffers, outputs) dense",
    "lastdim": "unit last-dim stride",
    "1d": "1-D weights and biases dense",
    "upstream": "output gradients dense (no call in the file differentiates out.sum())",
    "structure": "sizes keep the example's parity",
    "precision": "fp32 tl.dot at TF32 (Triton's default)",
    "empty": "batch >= 1",
    "extreme": "values of the example's magnitude (not x100, not shifted by -120)",
    "defaults": "the entry called with the arguments the example passes (no call in the file leaves its defaults out)",
}


# The kind of each probe's failures when a task's run_validation judged the contract (probe_kind); the example,
# repeat and reference probes repeat the validator's own contract cases and have none.
PROBE_KINDS = {"layout": "layouts", "rows": "rows", "sizes": "sizes", "sentinel": "sentinel", "magnitude": "extreme",
               "dtype": "dtype", "defaults": "defaults", "grad": "grad"}


def layouts_tier(declared: bool | None, require: Iterable[str], kernelbench: bool) -> tuple[bool, str, str]:
    """run_validation's layout variants: (run them, their tier, why). A form-(a) reference's NONCONTIGUOUS = True (or
    noncontiguous=true), or "layouts" required, makes them contract; NONCONTIGUOUS = False turns them off; by default
    they run as robustness (the problem builds contiguous inputs; the audit's layout_kind says the same)."""
    if declared is False:
        return False, ROBUSTNESS, "turned off (noncontiguous=false or NONCONTIGUOUS = False)"
    if covers(require, "layouts"):
        return True, CONTRACT, "required (strict or require = [\"layouts\"])"
    if declared is True and not kernelbench:
        return True, CONTRACT, "the reference declares NONCONTIGUOUS = True (or noncontiguous=true was passed)"
    return True, ROBUSTNESS, "the problem builds contiguous inputs; other layouts test robustness"


def layout_kind(given_as_view: bool, finer: str | None = None) -> str | None:
    """The robustness kind of a layout failure, or None (contract) where the example itself passes that tensor
    non-contiguous: its callers give such views. Otherwise the finer kind the layout probe saw (weight, lastdim,
    1d) or "layouts": the example gives it contiguous, so another layout is robustness unless required."""
    return None if given_as_view else (finer or "layouts")


def probe_kind(probe: str, kind: str | None = None) -> str | None:
    """The robustness kind of a probe failure when a task's validation judged the contract: the finer kind the probe
    gave it, else its probe's (PROBE_KINDS); None for the probes that repeat the validator's contract cases."""
    return kind or PROBE_KINDS.get(probe)


def covers(require: Iterable[str], kind: str) -> bool:
    """The kind, or the broad kind it belongs to, is required (made contract)."""
    req = set(require)
    return kind in req or PARENT.get(kind, kind) in req


def tier_of(kind: str | None, require: Iterable[str]) -> str:
    """contract for the callers' own inputs (kind None) and for a required kind; robustness otherwise."""
    return CONTRACT if kind is None or covers(require, kind) else ROBUSTNESS


def title(kind: str) -> str:
    """What a report calls a robustness kind."""
    return TITLES.get(kind, TITLES.get(PARENT.get(kind, ""), kind))


def fix(kind: str) -> str:
    """The usual fix of a failure of that kind."""
    return FIXES.get(kind, FIXES.get(PARENT.get(kind, ""), ""))
