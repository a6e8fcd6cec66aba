"""@triton.autotune under Triton's interpreter: the first config that survives pruning, chosen without timing.

Timing under the interpreter says nothing about a GPU, and Triton 3.6's autotuner cannot even try: its benchmarker
comes from the active GPU driver, so on a machine without one every autotuned kernel with two or more configs
raised "0 active drivers" (the gallery's softmax stage 3 among them; Triton 3.9 times them on the CPU instead,
running the whole kernel once per config). Outputs are checked only for the config the autotuner picks, so
skipping the others' runs loses no coverage.
"""

from __future__ import annotations

from typing import Any

UNTIMED = [0.0, 0.0, 0.0]  # (median, p20, p80) for every config: the autotuner's min() keeps the first one


def install() -> str:
    """Patch Autotuner._bench for this (interpreter) process; returns what was done, for the runtime report."""
    from triton.runtime import autotuner

    cls = autotuner.Autotuner
    if getattr(cls, "_p2t_untimed", False):
        return "first pruned config, untimed"
    if not hasattr(cls, "_bench"):  # pragma: no cover - a Triton whose autotuner is built differently
        return "autotuner left as is (no Autotuner._bench in this Triton)"

    def _bench(self: Any, *args: Any, config: Any, **meta: Any) -> list[float]:
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:  # the check Triton's own _bench makes, so the error stays the same
            raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                             " Make sure that you don't re-define auto-tuned symbols.")
        return list(UNTIMED)

    cls._bench = _bench
    cls._p2t_untimed = True
    return "first pruned config, untimed"
