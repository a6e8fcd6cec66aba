"""First fixes that follow the evidence: what failed, on which variant, what that variant changes.

A finding on a variant names it and what it changes (layout, sizes, values). A cause is named only when the
evidence shows it: the same values in the base layout passed (so the layout is the cause), the main case passed
(so a size is), or the construct is in the candidate's source (with its line). Otherwise the fix says what was seen
and where to look, not a guess: "subtract the max before exp" for a NaN that only a strided view produced, or
"no nan_to_num" for a kernel that has none, sent users after causes their kernels did not have (issue 29).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

# (pattern over the case label, what the variant changes, how)
VARIANTS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r":strided$"), "layout", "the same values as case {base}, but each floating input is a view of every "
     "other element of a buffer twice as wide (stride(-1) = 2, the gaps hold NaN)"),
    (re.compile(r":transposed$"), "layout", "the same values as case {base}, but each input of rank >= 2 is stored "
     "transposed (same shape, stride(-1) != 1)"),
    (re.compile(r"^nan_inf$"), "values", "NaN and +-inf written into one floating input, sizes as the main case"),
    (re.compile(r":x1e4$"), "values", "every floating input scaled by 1e4 (|x| ~ 1e4), the sizes unchanged"),
    (re.compile(r"^(zero|edge_empty)"), "sizes", "a size set to 0 (empty tensors)"),
    (re.compile(r"^(single|edge_single)"), "sizes", "sizes set to 1"),
    (re.compile(r"^odd"), "sizes", "odd sizes (not a multiple of any block size)"),
    (re.compile(r"^long_"), "sizes", "one long odd dimension (several blocks along it), the others small"),
    (re.compile(r"^small$"), "sizes", "small sizes"),
]
# Constructs that turn NaN into a number (on a GPU tl.maximum/tl.minimum return the other operand for a NaN unless
# propagate_nan=tl.PropagateNan.ALL), and constructs that can make NaN/Inf out of finite values.
NAN_DROPPERS = [("nan_to_num", re.compile(r"nan_to_num")), ("clamp", re.compile(r"\bclamp\w*\(")),
                ("tl.maximum/tl.minimum (drop NaN on a GPU unless propagate_nan=tl.PropagateNan.ALL)",
                 re.compile(r"\btl\.(maximum|minimum)\((?![^)]*propagate_nan)")),
                ("tl.where", re.compile(r"\btl\.where\(")), ("a NaN test", re.compile(r"isnan|\b(\w+)\s*!=\s*\1\b"))]
NAN_MAKERS = [("tl.exp (overflows past ~88 in fp32)", re.compile(r"\btl\.(exp|exp2)\(")),
              ("tl.log (of 0 or a negative)", re.compile(r"\btl\.(log|log2)\(")),
              ("tl.sqrt/tl.rsqrt (of 0 or a negative)", re.compile(r"\btl\.(sqrt|rsqrt)\(")),
              ("a division", re.compile(r"[^/]/[^/=]")),
              ("a masked load with an infinite `other`", re.compile(r"other\s*=\s*-?float\(['\"]-?inf"))]


def _source(path: Path) -> list[str]:
    """The file's lines with docstrings blanked (a docstring that says "no nan_to_num" is not a nan_to_num)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    lines = text.splitlines()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return lines
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for i in range(node.lineno - 1, (node.end_lineno or node.lineno)):
                lines[i] = ""
    return lines


def _found(lines: list[str], patterns: list[tuple[str, re.Pattern[str]]], limit: int = 4) -> list[str]:
    """'what (line N: code)' for each pattern present in the source's code (comments and docstrings skipped)."""
    out = []
    for what, pat in patterns:
        for i, line in enumerate(lines, 1):
            code = line.split("#", 1)[0]
            if pat.search(code):
                out.append(f"{what} (line {i}: `{code.strip()[:80]}`)")
                break
        if len(out) >= limit:
            break
    return out


def _variant(label: str) -> tuple[str, str, str] | None:
    """(kind, what it changes, base case) of a case label that names a variant, else None."""
    base = label.split(":", 1)[0]
    for pat, kind, how in VARIANTS:
        if pat.search(label):
            return kind, how.format(base=base), base
    return None


def _passed(cases: list[dict[str, Any]], name: str) -> bool:
    runs = [c for c in cases if c.get("name") == name and not c.get("skipped")]
    return bool(runs) and all(c.get("ok") for c in runs)


def _main_passed(cases: list[dict[str, Any]]) -> bool:
    """True when a case that is not a variant (the problem's own sizes and layout) passed."""
    return any(c.get("ok") and not c.get("skipped") and ":" not in str(c.get("name")) and
               _variant(str(c.get("name"))) is None for c in cases)


def _for_variant(f: dict[str, Any], kind: str, how: str, base: str, cases: list[dict[str, Any]],
                 lines: list[str] | None = None, file: str = "the candidate") -> str | None:
    label, check = str(f.get("case")), f.get("check")
    head = f"fails on the `{label}` variant ({kind}: {how})"
    if kind == "values" and label.endswith(":x1e4"):
        ran = any(c.get("name") == base and not c.get("skipped") for c in cases)
        if ran and not _passed(cases, base):
            return f"{head}; case {base} fails too at its own magnitudes: fix that first"
        if not ran and not _main_passed(cases):
            return None
        why = f"case {base} with the same sizes passed" if ran else "the main case passed"
        makers = _found(lines or [], NAN_MAKERS)
        exp = [m for m in makers if m.startswith("tl.exp")]
        return (f"{head}; {why}, so the magnitude is the cause: look for what overflows or loses precision at "
                "|x| ~ 1e4 before it is scaled" +
                (f"; constructs in {file} that overflow first: {'; '.join(makers)}" if makers else "") +
                ("; subtract the row max before tl.exp (exp of 88+ is inf in fp32)" if exp else ""))
    if kind == "layout":
        if not any(c.get("name") == base and not c.get("skipped") for c in cases):  # only_cases=[the variant]
            return f"{head}; case {base} did not run here: run it too to tell the layout from the values as the cause"
        if not _passed(cases, base):
            return f"{head}; case {base} fails too with the same values: fix that first"
        return (f"{head}; case {base} with the same values passed, so the layout is the cause: the kernel indexes an "
                "input as if it were contiguous. Pass each input's strides (x.stride(0), x.stride(1), ...) to the "
                "kernel and index with them, or call .contiguous() in the wrapper (free on contiguous input)")
    if kind == "sizes":
        if not _main_passed(cases):
            return None
        if label.startswith(("zero", "edge_empty")):
            return (f"{head}; the main case passed, so the empty size is the cause: return the (empty) output early "
                    "when numel() == 0, before computing a grid or a BLOCK from it (tl.arange(0, 0) does not compile)")
        return (f"{head}; the main case passed, so only sizes changed: look at what depends on them (the grid's "
                "triton.cdiv, the masks of the last partial block, loop bounds)" +
                ("" if check not in ("nonfinite", "unwritten_output") else
                 "; a NaN or unwritten element at these sizes usually sits in the last block"))
    return None


def _for_nan(f: dict[str, Any], lines: list[str], file: str) -> str:
    seen = str(f.get("message", ""))
    if "where the reference is finite" in seen:  # the NaN spread: the evidence is about reads, not about dropping
        return (f"the NaN/inf put into the input reached outputs whose reference stays finite ({seen[:140]}): the "
                "kernel computes those outputs from input elements the reference does not use for them; look for a "
                "reduction, or a load, whose range is wider than the reference's for that output (first index in "
                "the evidence)")
    droppers = _found(lines, NAN_DROPPERS)
    if droppers:
        how = ("; to keep NaN through tl.maximum/tl.minimum: tl.where(x != x, x, tl.maximum(x, 0.0)), or "
               "propagate_nan=tl.PropagateNan.ALL") if any(d.startswith("tl.maximum") for d in droppers) else ""
        return (f"NaN/inf in the input must reach the same outputs as in the reference ({seen[:160]}); constructs in "
                f"{file} that can drop NaN: {'; '.join(droppers)}{how}")
    return (f"NaN/inf in the input must reach the same outputs as in the reference ({seen[:160]}); {file} has no "
            "construct that drops NaN (nan_to_num, clamp, tl.maximum/minimum, tl.where, a NaN test): follow the "
            "first index in the evidence back to the inputs the kernel read for it")


def _for_nonfinite(f: dict[str, Any], lines: list[str], file: str) -> str:
    makers = _found(lines, NAN_MAKERS)
    where = "; constructs in " + file + " that can make NaN/Inf from finite values: " + "; ".join(makers) \
        if makers else f"; {file} has none of tl.exp/log/sqrt, a division or an infinite `other`"
    return ("NaN/Inf where the reference is finite (worst indices in the evidence): check those elements' inputs "
            "and the masked lanes that reach them" + where)


# The checks whose fix depends on the inputs (whatever their severity: a robustness finding needs its fix too).
EVIDENCE_CHECKS = {"exception", "mismatch", "relative_mismatch", "nonfinite", "unwritten_output", "nan_propagation",
                   "shape_mismatch", "nondeterministic"}


def explain(report: dict[str, Any], cand_path: Path) -> None:
    """Rewrite the fix of each input-dependent finding from the evidence (variant, base case, source), in place:
    the contract's `findings` and the `robustness` section alike (a robustness finding keeps its kind's general
    fix only where the evidence names nothing more precise)."""
    findings = [f for f in [*(report.get("findings") or []), *(report.get("robustness") or [])]
                if f.get("check") in EVIDENCE_CHECKS]
    if not findings:
        return
    cases = report.get("cases") or []
    lines = _source(cand_path)
    file = cand_path.name
    for f in findings:
        label = str(f.get("case") or "")
        var = _variant(label)
        fix = None
        if var is not None and f.get("check") != "nan_propagation":
            fix = _for_variant(f, *var, cases, lines, file)
        if fix is None and f.get("check") == "nan_propagation":
            fix = _for_nan(f, lines, file)
        elif fix is None and f.get("check") == "nonfinite":
            fix = _for_nonfinite(f, lines, file)
        if fix:
            f["fix"] = fix
            if var is not None:
                f["variant"] = {"case": label, "changes": var[0], "how": var[1]}
