"""The cases run_benchmark times (one home: the timing loop, the roofline estimate and torch.compile's explain all
start from this list)."""

from __future__ import annotations

from typing import Any

from ..validation import cases as cs
from ..validation import kernelbench as kbench
from ..validation.tasks import SIZES_NEED_KERNELBENCH, Task, TaskError


def bench_cases(task: Task, args: dict[str, Any]) -> list[tuple[str, Any, float | None]]:
    """The cases run_benchmark times, as (case name, shape, sweep x) (KernelBench: the shape is a sizes dict,
    kernelbench.bench_specs); the roofline estimate and the explain op scale to or run the first one."""
    if task.kernelbench:
        return kbench.bench_specs(task, args)
    if args.get("sizes"):
        raise TaskError("inputs", SIZES_NEED_KERNELBENCH, usage=True)
    sweep = args.get("sweep")
    if sweep:
        param, template = sweep["param"], sweep.get("shape") or [sweep["param"]]
        out = []
        for v in sweep["values"]:
            shape = tuple(v if s == param else s for s in template)
            out.append((f"{param}={v}", shape, float(v)))
        return out
    if args.get("cases"):
        return [(c.get("name") or f"case{i}", tuple(c["shape"]) if isinstance(c["shape"], list) else c["shape"], None)
                for i, c in enumerate(args["cases"])]
    bench = getattr(task.ref_mod, "BENCH_SHAPES", None)
    if bench:
        return [(k, v, None) for k, v in bench.items()]
    return [(*cs.bench_shape(task.ref_mod), None)]
