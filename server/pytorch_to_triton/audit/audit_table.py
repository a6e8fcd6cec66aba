"""The task sidecar's `[audit]` table: the example call the probes run, and the findings disputed with a reason.

```toml
[audit]
harness = "audit_harness.py"   # make_inputs(case) (+ ENTRY, AUDIT_SHAPE, reference); default: the task reference
entry = "softmax"              # the audited file's public function (default: the harness's ENTRY)
shape = [4, 1000]              # the example case (default: the harness's AUDIT_SHAPE or first SHAPES entry)
dtype = "float32"
accept = [{check = "masked_load_other", line = 42, reason = "lanes feed tl.dot; other= would change results"}]
require = ["weight"]            # robustness kinds the callers DO give (tier_rules.AUDIT_KINDS): their failures are P0s
assume = ["rows <= 65535"]      # contract lines you state; every finding's "assumed:" line shows them
```
Checked here, in the server, without running anything (sidecar.py calls parse_audit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..tier_rules import AUDIT_KINDS

AUDIT_KEYS = ("harness", "entry", "shape", "dtype", "accept", "budget_s", "require", "assume")
ACCEPT_KEYS = ("check", "line", "reason")


def parse_audit(raw: Any, path: Path) -> dict[str, Any]:
    """The checked [audit] table; every error names the file and the key."""
    where = f"{path.name}: audit"
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be a table: [audit] with harness, entry, shape, dtype, accept")
    unknown = [k for k in raw if k not in AUDIT_KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {unknown}; allowed: {list(AUDIT_KEYS)}")
    out: dict[str, Any] = {}
    for k in ("harness", "entry", "dtype"):
        if k in raw:
            if not isinstance(raw[k], str) or not raw[k]:
                raise UsageError(f"{where}.{k} must be a non-empty string")
            out[k] = raw[k]
    if "shape" in raw:
        s = raw["shape"]
        if not (isinstance(s, list) and all(isinstance(v, int) and v >= 0 for v in s)) and not (
                isinstance(s, dict) and all(isinstance(v, int) for v in s.values())):
            raise UsageError(f"{where}.shape must be a list of sizes, e.g. [4, 1000] (or a table of named sizes)")
        out["shape"] = s
    if "budget_s" in raw:
        if not isinstance(raw["budget_s"], (int, float)) or not 1 <= raw["budget_s"] <= 3600:
            raise UsageError(f"{where}.budget_s must be seconds between 1 and 3600")
        out["budget_s"] = float(raw["budget_s"])
    if "require" in raw:
        r = raw["require"]
        if not isinstance(r, list) or not all(isinstance(k, str) and k in AUDIT_KINDS for k in r):
            raise UsageError(f"{where}.require must be a list of robustness kinds the callers give, among "
                             f"{list(AUDIT_KINDS)}, e.g. require = [\"weight\", \"empty\"]")
        out["require"] = list(dict.fromkeys(r))
    if "assume" in raw:
        a = raw["assume"]
        if not isinstance(a, list) or not all(isinstance(x, str) and x.strip() for x in a):
            raise UsageError(f"{where}.assume must be a list of sentences, e.g. assume = [\"rows <= 65535\"]")
        out["assume"] = [x.strip() for x in a]
    accept = raw.get("accept", [])
    if not isinstance(accept, list):
        raise UsageError(f"{where}.accept must be a list: accept = [{{check = \"...\", line = 42, reason = \"...\"}}]")
    out["accept"] = []
    for i, a in enumerate(accept):
        if not isinstance(a, dict) or set(a) != set(ACCEPT_KEYS):
            raise UsageError(f"{where}.accept[{i}] needs exactly check, line and reason (a dispute without a reason "
                             "is not recorded)")
        if not isinstance(a["check"], str) or not isinstance(a["line"], int) or not str(a["reason"]).strip():
            raise UsageError(f"{where}.accept[{i}]: check is a finding's name, line an integer, reason a sentence")
        out["accept"].append({"check": a["check"], "line": a["line"], "reason": str(a["reason"]).strip()})
    return out
