"""Value recipes: a case that changes the VALUES of an input, not its size (issue 29), in a few words a sidecar
can hold: `targets = "25% = -100"` (a seeded quarter of the elements set to -100: F.cross_entropy's ignore_index),
`x = "scale 1e4"`, `mask = "tril"`, `x = "1% = nan"`, `bias = "= 0"`; several joined with ";".

Pure Python (no torch): sidecar.py checks a recipe here before anything runs, and the worker (worker/validation/cases.py)
parses the same text to apply it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_NUM = r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)"
_FRACTION = re.compile(rf"^(\d+(?:\.\d+)?)\s*%\s*=\s*({_NUM})$", re.I)
_SCALE = re.compile(rf"^scale\s+({_NUM})$", re.I)
_FILL = re.compile(rf"^=\s*({_NUM})$", re.I)
SHAPES = ("tril", "triu")
HELP = ('a recipe is "P% = V" (a seeded P percent of the elements set to V: "25% = -100", "1% = nan"), "scale S" '
        '("scale 1e4"), "= V" (every element), "tril" or "triu" (keep one triangle of the last two dims); join '
        'several with ";"')


@dataclass(frozen=True)
class Step:
    """One edit: kind is fraction (share, value), scale (value), fill (value), tril or triu."""

    kind: str
    value: float = 0.0
    share: float = 0.0


def _number(text: str) -> float:
    return float(text)


def parse(text: str) -> list[Step]:
    """The steps of a recipe; ValueError (saying what a recipe looks like) when it is not one."""
    steps = []
    for part in (p.strip() for p in str(text).split(";")):
        if not part:
            continue
        if m := _FRACTION.match(part):
            share = float(m.group(1)) / 100.0
            if not 0.0 < share <= 1.0:
                raise ValueError(f"{part!r}: the share must be in (0%, 100%]")
            steps.append(Step("fraction", _number(m.group(2)), share))
        elif m := _SCALE.match(part):
            value = _number(m.group(1))
            if not math.isfinite(value):
                raise ValueError(f"{part!r}: scale by a finite number")
            steps.append(Step("scale", value))
        elif m := _FILL.match(part):
            steps.append(Step("fill", _number(m.group(1))))
        elif part.lower() in SHAPES:
            steps.append(Step(part.lower()))
        else:
            raise ValueError(f"{part!r} is not a value recipe: {HELP}")
    if not steps:
        raise ValueError(f"an empty value recipe: {HELP}")
    return steps
