"""Known limitations of Triton's CPU interpreter, explained: a hint for an exception, notes for a report.

Each entry names an error only the interpreter raises (or a wrong value only it computes) and what to write
instead; the kernel is usually fine on a GPU, but it must also run here to be validated without one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import interp_tf32

# (id, pattern over "Type: message" of any exception in the chain, hint)
HINTS: list[tuple[str, re.Pattern[str], str]] = [
    ("interp_mask_dtype", re.compile(r"mask has unsupported dtype"),
     "the interpreter received a load/store mask whose data is not boolean: an integer expression used as the mask "
     "(e.g. `mask=offs`) does this; pass a comparison, e.g. `mask=offs < n`"),
    ("interp_python_int", re.compile(r"'(int|float|bool)' object has no attribute '(to|dtype|shape|type|item)'"),
     "a tl.static_range() loop variable (or another plain Python number) is a Python int under the interpreter, "
     "so it has no .to()/.dtype (a range()/tl.range() variable is made a tensor here): use tl.cast(i, tl.float32), or "
     "tl.full((), i, tl.int32).to(...), or compute from tl.arange tensors"),
    ("interp_bf16", re.compile(r"get_bf16|bfloat16.*(unsupported|not supported)|(unsupported|not supported).*bfloat16"),
     "the interpreter stores bfloat16 as raw 16-bit patterns, so arithmetic on bf16 values fails or computes on the "
     "bits: cast loaded bf16 values to fp32 (x.to(tl.float32)) before arithmetic and back (.to(tl.bfloat16)) when "
     "storing"),
    ("interp_atomic_fp16", re.compile(r"atomic.*(float16|fp16|half)|(float16|fp16|half).*atomic", re.I),
     "fp16 tl.atomic_add is not supported by the interpreter: accumulate into a float32 buffer with tl.atomic_add "
     "and cast afterwards (more accurate on the GPU too), or validate this kernel on a GPU"),
    ("interp_no_asm", re.compile(r"(inline_asm|extern_elementwise) not supported in interpreter"),
     "inline PTX (tl.inline_asm_elementwise) and extern library calls cannot run under the interpreter: give the "
     "kernel a pure-Triton path when TRITON_INTERPRET=1, or validate it on a GPU"),
]
# The same error on a line whose mask is built from comparisons: its type is int1, so the evidence says the
# interpreter computed it as integers (install_bool_splat fixes the known case); "not boolean" would be a guess.
MASK_IS_COMPARISON = ("the mask on this line is built from comparisons, so its type is boolean (the GPU compiles it "
                      "as such); the interpreter computed its data as integers. Keep the mask; to run it here, build it "
                      "from block comparisons only (e.g. `(cols < V) & (cols < V * valid)`), or validate on a GPU")
_COMPARISON = re.compile(r"mask\s*=.*(<|>|==|!=)")
TF32_FIX = ("the fp32 tl.dot ran in TF32 (the GPU's default, emulated here: 10-bit mantissa): pass "
            "input_precision='ieee' (or 'tf32x3'), or declare a tf32 tolerance with its reason")
BF16_NOTE = ("bfloat16 under the interpreter: it stores bf16 as raw 16-bit patterns, so kernel arithmetic on bf16 "
             "values (x * 2.0, x + y, exp) computes on the bits and gives wrong values or NaN, while a GPU computes "
             "them correctly. Cast loaded bf16 values to fp32 (x.to(tl.float32)) before arithmetic and back when "
             "storing; tl.dot on bf16 operands is computed on the values by the worker")


def exception_hint(chain: list[BaseException], interpreter: bool) -> dict[str, str] | None:
    """{"hint", "limitation"} for the first known interpreter-only error in an exception chain, else None."""
    if not interpreter:
        return None
    for exc in reversed(chain):  # innermost first: it names the real error
        text = f"{type(exc).__name__}: {exc}"
        for ident, pattern, hint in HINTS:
            if pattern.search(text):
                return {"hint": hint, "limitation": ident}
    return None


def annotate(report: dict[str, Any], interpreter: bool, cand_path: Path) -> None:
    """Add the TF32 field/note and the bf16 explanation to a validation report (in place)."""
    info, note = interp_tf32.validation_summary(interpreter)
    notes: list[str] = report.setdefault("notes", [])
    tf32_dots = info["dot_calls"].get("tf32", 0) + info["dot_calls"].get("tf32x3", 0)
    if not interpreter:
        info["status"] = "gpu"  # the GPU's own tensor cores: nothing to emulate
    elif not info["emulated"] and _calls_dot(cand_path):
        info["status"] = "TF32 not emulated"
        notes.append(interp_tf32.not_emulated_note(str(info.get("reason") or "unknown reason")))
    else:
        info["status"] = "emulated" if tf32_dots else "no tf32 dot"
    if note:
        notes.append(note)
    report["tf32"] = info
    if info["dot_calls"].get("tf32"):  # the likeliest cause of a mismatch in a kernel whose dots ran in TF32
        for f in report.get("findings", []):
            if f.get("check") in ("mismatch", "gradient_mismatch"):
                f["hint"] = TF32_FIX
                f["fix"] = f"{TF32_FIX}; if not, {f.get('fix') or 'check the worst indices'}"
    if not interpreter:
        return
    for f in report.get("findings", []):
        ev = f.get("evidence")
        if f.get("check") == "exception" and isinstance(ev, dict) and ev.get("hint"):
            if ev.get("limitation") == "interp_mask_dtype" and _COMPARISON.search(str(ev.get("kernel_source_line"))):
                ev["hint"] = MASK_IS_COMPARISON
            f["hint"] = ev["hint"]
            f["fix"] = f"{ev['hint']} (at {Path(str(ev.get('file'))).name}:{ev.get('line')})"
    bad_bf16 = {c.get("name") for c in report.get("cases", []) if c.get("dtype") == "bfloat16" and not c.get("ok")}
    hit = [f for f in report.get("findings", []) if f.get("check") in ("mismatch", "nonfinite")
           and str(f.get("case", "")).split(":")[0] in {str(n).split(":")[0] for n in bad_bf16}]
    if hit:
        for f in hit:
            f.setdefault("hint", BF16_NOTE)
            f["fix"] = ("if the kernel computes on bf16 values, cast them to fp32 (x.to(tl.float32)) before arithmetic: "
                        "the interpreter computes on raw bf16 bits (a GPU may pass it as written); if it already "
                        f"does, {f.get('fix') or 'check the worst indices'}")
        notes.append(BF16_NOTE)


def _calls_dot(path: Path) -> bool:
    try:
        return "dot(" in path.read_text(errors="replace")
    except OSError:
        return True  # cannot tell: say so rather than stay silent
