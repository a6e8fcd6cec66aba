"""The time budget of a validation under Triton's CPU interpreter (issue 40): how long each planned case will take,
predicted from the cases already run, and which cases to leave out so that the whole call ends within the budget.

The interpreter's cost grows with the work of the case: the elements it reads and writes (programs x block) and the
dot products it runs (an attention's loop over keys grows with T * T). Each case's weight is its inputs + outputs
plus its reference's FLOPs / FLOPS_PER_ELEM, both read on fake tensors (nothing allocated); the seconds per unit of
weight, and a fixed cost per run, come from a line through the runs already seen, stretched by SLACK. A case whose
prediction no longer fits what is left of the budget is dropped and named; the problem's main case and the user's
own cases are never dropped. The first estimate is made after the first case's first trial and said up front.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

DEFAULT_CPU_S = 120.0  # about 2 minutes on 2 cores: the target for a CPU validation
FLOPS_PER_ELEM = 64  # one element read or written costs the interpreter about what 64 reference FLOPs cost (numpy dot)
SLACK = 1.25  # predictions are stretched by this much: a dropped case is cheaper than a run past the budget


def work(mod: ModuleType, sizes: dict[str, int], run_model: bool = True) -> float | None:
    """The weight of a KernelBench case at `sizes`: inputs + outputs + FLOPs / FLOPS_PER_ELEM of the reference,
    on fake tensors. None when the inputs cannot be built fake. `run_model=False`: the inputs alone (the reference's
    forward never runs: at a size variant it may end the process, as a device-side assert would)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    from . import sizes as sz
    from .nest import tensors_in

    with sz.sized(mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
                inputs = list(mod.get_inputs())
                n = sum(t.numel() for t in tensors_in(inputs))
                flops = 0
                if not run_model:
                    return float(n)
                try:
                    model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
                    counter = FlopCounterMode(display=False)
                    with counter:
                        out = model(*inputs)
                    n += sum(t.numel() for t in tensors_in(out))
                    flops = counter.get_total_flops()
                except Exception:  # noqa: BLE001 - an op without a fake kernel: the elements alone
                    pass
                return float(n) + flops / FLOPS_PER_ELEM
        except Exception:  # noqa: BLE001
            return None


def shape_work(shape: object) -> float | None:
    """The weight of a form-(a) case: its shape's element count (+1, so an empty case weighs something)."""
    if isinstance(shape, (tuple, list)) and all(isinstance(n, int) for n in shape):
        n = 1
        for d in shape:
            n *= d
        return float(n + 1)
    return None


@dataclass
class Budget:
    """What the cases of one validation may spend, and what they spent so far."""

    seconds: float | None  # None: no budget (a GPU run, or budget_s=0)
    start: float = field(default_factory=time.monotonic)
    seen: list[tuple[float, float]] = field(default_factory=list)  # (weight, seconds) of one run each
    dropped: list[str] = field(default_factory=list)
    announced: bool = False
    planned_out: list[str] = field(default_factory=list)  # what the up-front estimate expected to leave out

    def elapsed(self) -> float:
        """Seconds since the validation's cases started."""
        return time.monotonic() - self.start

    def left(self) -> float:
        """Seconds of the budget not spent yet (infinite without a budget)."""
        return float("inf") if self.seconds is None else self.seconds - self.elapsed()

    def observe(self, weight: float | None, runs: int, seconds: float) -> None:
        """One case (or trial) ran `runs` times at `weight` in `seconds`."""
        if weight and runs > 0 and seconds > 0:
            self.seen.append((float(weight), seconds / runs))

    def model(self) -> tuple[float, float] | None:
        """(seconds per run, seconds per unit of weight): a least-squares line through the runs seen once two
        weights differ (the first run, which pays the warm-up, left out when three or more are there), else all of
        a run's time put on its weight (an estimate that errs long). None before any run."""
        pts = self.seen[1:] if len(self.seen) >= 3 else self.seen
        if not pts:
            return None
        ws = [w for w, _ in pts]
        if max(ws) <= min(ws) * 1.05:
            return 0.0, sum(t for _, t in pts) / sum(ws)
        mw, mt = sum(ws) / len(pts), sum(t for _, t in pts) / len(pts)
        r = max(0.0, sum((w - mw) * (t - mt) for w, t in pts) / sum((w - mw) ** 2 for w in ws))
        return max(0.0, mt - r * mw), r

    @property
    def rate(self) -> float | None:
        """Seconds per unit of weight (the model's slope), None before any run."""
        m = self.model()
        return None if m is None else m[1]

    def separated(self) -> bool:
        """Whether two different weights were seen: only then does the fixed cost per run stand apart."""
        ws = [w for w, _ in self.seen]
        return bool(ws) and max(ws) > min(ws) * 1.05

    def predict(self, weight: float | None, runs: int) -> float | None:
        """Seconds a case of this weight will take, None before any case ran (or without a weight)."""
        m = self.model()
        if m is None or not weight:
            return None
        return (m[0] + m[1] * weight) * runs * SLACK

    def fits(self, weight: float | None, runs: int) -> bool:
        """Whether a case of this weight, run `runs` times, fits what is left. It does while the model has seen one
        weight only (the warm-up of a first small case would make every bigger one look too long)."""
        p = self.predict(weight, runs)
        return self.seconds is None or p is None or not self.separated() or p <= self.left()

    def drop(self, label: str, weight: float | None, runs: int) -> None:
        """Remember a case left out, with its prediction, for the report."""
        self.dropped.append(f"{label} (about {self.predict(weight, runs) or 0:.0f} s)")

    def plan_line(self, rows: list[tuple[str, float | None, int, bool]]) -> str:
        """The up-front estimate: the total of the cases still to run, and those that will not fit."""
        total, fits, out = 0.0, self.left(), []
        for label, weight, runs, required in rows:
            p = self.predict(weight, runs) or 0.0
            total += p
            if required or p <= fits:
                fits -= p
            else:
                out.append(label)
        spent = self.elapsed()
        self.planned_out = out
        line = f"estimate: about {spent + total:.0f} s for all cases ({spent:.0f} s spent, {len(rows)} cases to go)"
        if self.seconds is None:
            return line
        line += f"; budget {self.seconds:.0f} s"
        if out:
            return line + (f": about {len(out)} case(s) will be left out ({', '.join(out[:6])}"
                           f"{', ...' if len(out) > 6 else ''}); pass budget_s (CLI --budget, sidecar budget = ...) "
                           "for more")
        over = spent + total - self.seconds
        if over >= 0.5:  # issue 49: "about 163 s ... budget 120 s: all fit". Nothing can go: the cases left are ones
            # never left out (the main case, the user's own, the only case past the candidate's blocks)
            return line + (f": about {over:.0f} s over it, and every case still runs (the main case and the cases "
                           "you asked for are never left out); pass budget_s (CLI --budget) to say how long is fine")
        return line + ": all fit"

    def settle(self, notes: list[str]) -> None:
        """Put the outcome beside the up-front estimate's note once the cases are over, so that it never says a case
        "will be left out" that then ran (issue 40's trial: long_height and long_width ran and passed)."""
        if not self.planned_out:
            return
        out = [d.rsplit(" (about ", 1)[0] for d in self.dropped]  # a dtype may follow the planned label
        ran = [c for c in self.planned_out if not any(d == c or d.startswith(c + " ") for d in out)]
        tail = (" [the estimate at the start; in the end "
                + (f"{len(out)} left out" if out else "none was left out")
                + (f", and {', '.join(ran[:6])} ran after all" if ran else "") + "]")
        for i, n in enumerate(notes):
            if "case(s) will be left out (" in n and not n.endswith("]"):
                notes[i] = n + tail

    def note(self) -> str | None:
        """The report's note on what the budget left out, None when nothing was."""
        if not self.dropped:
            return None
        return (f"time budget {self.seconds:.0f} s (interpreter): {len(self.dropped)} case(s) left out, predicted "
                f"from the cases that ran: {', '.join(self.dropped)}. Pass budget_s=... (CLI --budget, sidecar "
                "budget = ...) to run them, or run on a GPU")


def from_args(args: dict[str, Any], device: str) -> Budget:
    """The budget of one call: args["budget_s"] (0 = none), else DEFAULT_CPU_S under the interpreter, none on a GPU."""
    raw = args.get("budget_s")
    if raw is not None:
        return Budget(float(raw) if float(raw) > 0 else None)
    return Budget(DEFAULT_CPU_S if device != "cuda" else None)
