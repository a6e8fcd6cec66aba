"""What a journal row is keyed on in the task sidecar: the settings that can change that tool's result.

A whole-file hash of `<reference>.p2t.toml` made every validation and audit row stale when the assistant added
`notes` or the `[bench]` formulas the stage-3 guide asks for (an 8-minute re-run, issue 29). A row now records,
for the sidecar, a digest of only the sections its tool reads:

| tool            | keyed on                                                  | not keyed on            |
|-----------------|-----------------------------------------------------------|-------------------------|
| run_validation  | every section except the ones on the right                 | notes, [bench], [audit], reasons |
| run_benchmark   | every section except the ones on the right ([bench] too)   | notes, [audit], reasons |
| audit_kernel    | every section except the ones on the right                 | notes, [bench], [cases], [tolerances] |
| roofline_estimate | every section except the ones on the right               | notes, [audit], [cases], [tolerances] |

A section this table does not name (one added later: value recipes, `require`, `strict`, ...) counts, so a new
setting can only make a row stale too often, never too rarely. A tolerance's `reason` is prose and does not count;
its numbers do. An absent sidecar and one with only notes have the same key: neither changes a result. A sidecar
that does not parse is keyed on its bytes (any edit counts; the tool itself reports the error).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PREFIX = "p2t-settings:"
_IGNORED: dict[str, frozenset[str]] = {
    "run_validation": frozenset({"notes", "bench", "audit"}),  # [audit]: the audit's example call and disputes
    "run_benchmark": frozenset({"notes", "audit"}),
    # The static audit reads only the notes; its compiled analysis (GPU) builds inputs from sizes and dtypes.
    "audit_kernel": frozenset({"notes", "bench", "cases", "tolerances"}),
    # The no-GPU estimate counts one call at the validated (shrunk) size: sizes, dtypes and [bench] count; the extra
    # cases, tolerances and audit disputes cannot change its counts (a trial's disputes made every estimate stale).
    "roofline_estimate": frozenset({"notes", "audit", "cases", "tolerances"}),
}
_DEFAULT_IGNORED = frozenset({"notes"})


def _without_reasons(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_reasons(v) for k, v in value.items() if k != "reason"}
    return value


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def sections(path: Path, tool: str) -> dict[str, str] | None:
    """{section: digest} of the sidecar sections `tool` reads; {} when the file is absent; None when it does not
    parse (then only its bytes can key it)."""
    from .sidecar import read_table

    try:
        table = read_table(Path(path))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    ignored = _IGNORED.get(tool, _DEFAULT_IGNORED)
    out = {}
    for name, value in table.items():
        if name in ignored:
            continue
        out[name] = _digest(_without_reasons(value) if name == "tolerances" else value)[:16]
    return out


def settings_key(path: Path, tool: str) -> tuple[str | None, dict[str, str]]:
    """(the value recorded in a row's `files` for the sidecar, the per-section digests to explain a change)."""
    secs = sections(path, tool)
    if secs is None:
        try:
            raw = Path(path).read_bytes()
        except OSError:
            return None, {}
        return PREFIX + "bytes:" + hashlib.sha256(raw).hexdigest(), {}
    return PREFIX + _digest(secs), secs


def is_settings_key(value: Any) -> bool:
    """True for a row's sidecar value written by settings_key (older rows hold the file's sha256)."""
    return isinstance(value, str) and value.startswith(PREFIX)


def describe_change(name: str, before: dict[str, str], path: Path, tool: str) -> str:
    """`reference.p2t.toml [cases] changed` (which sections differ), for the report's stale marker."""
    now = sections(path, tool)
    if now is None:
        return f"{name} changed"
    diff = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    return f"{name} [{', '.join(diff)}] changed" if diff else f"{name} changed"
