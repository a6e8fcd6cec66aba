"""Static findings as hypotheses: for each check that claims wrong results, the inputs that would expose it.

The static pass reads code; it cannot tell a masked-off lane that feeds a sum (harmless: every backend zero-fills
it) from one that feeds a max, nor a full-tile loop with a separate tail pass from a missing mask. So a static
suspect of wrong results is only a hypothesis: the probes named here (worker/probe/probes.py) run the entry on the inputs
that would expose it, and audit/evidence.py sets the severity from what they saw.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import lookup


@dataclass(frozen=True)
class Hypothesis:
    """The probes that would confirm a suspect and the inputs they use, in words for the report."""

    probes: tuple[str, ...]
    inputs: str


TAIL = "a size that is not a multiple of the block (tail), 1 and 0"
HYPOTHESES: dict[str, Hypothesis] = {
    "unmasked_access": Hypothesis(("sizes", "example"), TAIL),
    "block_ptr_boundary": Hypothesis(("sizes", "example"), TAIL),
    "masked_load_other": Hypothesis(("sizes", "example", "sentinel"), TAIL + " (the masked lanes are read)"),
    "masked_lanes_in_reduction": Hypothesis(("sizes", "example"), TAIL + " (the padded lanes join the reduction)"),
    "unshifted_exp": Hypothesis(("magnitude",), "extreme magnitudes (values x100, values shifted by -120)"),
    "low_precision_accumulator": Hypothesis(("dtype", "reference"), "bfloat16 inputs against the float32 result"),
    "missing_eps": Hypothesis(("sizes", "example"), "a row of equal values (zero variance) or size 1"),
    "nonconstexpr_arange": Hypothesis(("example", "sizes"), "any launch (the kernel does not compile)"),
    "ignored_strides": Hypothesis(("layout",), "a non-contiguous copy of the inputs (transposed, strided)"),
    "atomic_order": Hypothesis(("repeat",), "two runs of the same call"),
    "grid_floor_division": Hypothesis(("sizes", "rows", "example"), "a batch that is not a multiple of the block"),
    "grid_axis_mismatch": Hypothesis(("example", "sizes", "rows"), "a batch of more than one"),
    "assumed_contiguous": Hypothesis(("layout",), "a non-contiguous copy of the inputs (transposed, strided)"),
    "backward_ignores_flag": Hypothesis(("grad", "reference"), "the backward against a reference"),
}
# Findings about cost, not results (host_sync, uncoalesced_access ...) keep their static severity: a probe cannot
# confirm a speed problem, and their precision holds (issue 26: P1 2 of 4 real on new code, by reading).
SCOPES = ("kernel", "host")


def hypothesis(check: str) -> Hypothesis | None:
    """The hypothesis behind a static finding of wrong results, or None for a finding that is not one."""
    c = lookup(check)
    if c is None or c.scope not in SCOPES:
        return None
    return HYPOTHESES.get(check)
