"""KernelBench's own correctness criterion, run beside our validation so a suite shows what the stricter checks caught.

Follows ScalingIntelligence/KernelBench src/eval.py (`eval_kernel_against_ref` and `run_and_check_correctness`):
- both models are built right after `set_seed(seed_num)` (torch.manual_seed + torch.cuda.manual_seed), seed_num 42,
  from the same `get_init_inputs()`; no weights are copied: equal seeds give equal weights;
- `torch.manual_seed(seed)`, then one trial seed per trial from `torch.randint(0, 2**32 - 1, (1,))`; each trial calls
  `set_seed(trial_seed)` before `get_inputs()`; 5 trials (`num_correct_trials = 5` in its scripts);
- a trial passes on an equal output shape and `torch.allclose(output, output_new, atol=tol, rtol=tol)`; the verdict
  is "all trials pass". tol is its current fp32 value, 1e-4 (`get_tolerance_for_precision`: "By default for fp32,
  1e-4 is used according to torchbench"); v0/v0.1 used atol = rtol = 1e-02, so `tolerance` is an argument.
No poisoned outputs, no odd sizes or layouts, no honesty checks: that is the point of running it beside ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..device.runtime import Runtime, _sync
from .errors_fmt import describe
from .tasks import ImportFailure, TaskError, is_kernelbench, load_module

KB_SEED = 42
KB_TRIALS = 5
KB_TOLERANCE = 1e-4


def _set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def _to_device(x: Any, device: str) -> Any:
    # KernelBench's _process_input_tensor: tensors cast to the precision (fp32) and moved; other values unchanged.
    if not isinstance(x, torch.Tensor):
        return x
    return x.to(dtype=torch.float32 if x.is_floating_point() else x.dtype).to(device=device)


def apply_sizes(mod: Any, sizes: dict[str, Any] | None) -> None:
    """Override a KernelBench problem's module-level size constants (get_inputs() reads them at call time)."""
    for name, value in (sizes or {}).items():
        if not hasattr(mod, name):
            raise TaskError("inputs", f"sizes: the reference has no module-level name {name!r} to override", usage=True)
        setattr(mod, name, value)


def kernelbench_check(args: dict[str, Any], rt: Runtime, emit: Any, patches: Any) -> dict[str, Any]:
    """KernelBench's plain criterion for one candidate: {applicable, pass, passed_trials, trials, ...}."""
    trials = int(args.get("trials", KB_TRIALS))
    seed = int(args.get("seed", KB_SEED))
    tol = float(args.get("tolerance", KB_TOLERANCE))
    out: dict[str, Any] = {"applicable": True, "pass": False, "passed_trials": 0, "trials": trials, "seed": seed,
                           "atol": tol, "rtol": tol, "max_difference": None, "error": None,
                           "sizes": args.get("sizes") or {}, "device": rt.device}
    user_dirs = [Path(args["workspace"]).resolve()]
    try:
        ref = load_module(Path(args["reference"]), "kbref")
    except BaseException as e:  # noqa: BLE001 - the user's import error is data
        raise TaskError("import", f"the reference failed to import: {type(e).__name__}: {e}", usage=True) from e
    if not is_kernelbench(ref):
        return {**out, "applicable": False, "reason": "not a KernelBench-form problem (Model/get_inputs)"}
    apply_sizes(ref, args.get("sizes"))
    device = rt.device
    try:
        cand = load_module(Path(args["candidate"]), "kbcand")
        if not hasattr(cand, "ModelNew"):
            return {**out, "error": "the candidate defines no ModelNew"}
        init = [_to_device(x, device) for x in ref.get_init_inputs()]
        with torch.no_grad():
            _set_seed(seed)
            model = ref.Model(*init).to(device=device)
            _set_seed(seed)
            model_new = cand.ModelNew(*init).to(device=device)
    except (ImportFailure, Exception) as e:  # noqa: BLE001
        exc = e.exc if isinstance(e, ImportFailure) else e
        out["error"] = f"compile/construct: {describe(exc, 'import', user_dirs)['message'][:300]}"
        return out
    torch.manual_seed(seed)
    trial_seeds = [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(trials)]
    passed = 0
    with torch.no_grad():
        for i, trial_seed in enumerate(trial_seeds):
            emit("progress", message=f"KernelBench criterion trial {i + 1}/{trials}", progress=i, total=trials)
            _set_seed(trial_seed)
            inputs = [_to_device(x, device) for x in ref.get_inputs()]
            output = model(*inputs)
            _sync(device)
            try:
                output_new = model_new(*inputs)
                _sync(device)
            except Exception as e:  # noqa: BLE001 - KernelBench records a runtime error and stops
                out["error"] = f"runtime error in trial {i + 1}: {describe(e, 'run', user_dirs)['message'][:300]}"
                break
            if not isinstance(output_new, torch.Tensor) or output_new.shape != output.shape:
                got = list(output_new.shape) if isinstance(output_new, torch.Tensor) else type(output_new).__name__
                out["error"] = f"output shape mismatch: expected {list(output.shape)}, got {got}"
                break
            if torch.allclose(output, output_new, atol=tol, rtol=tol):
                passed += 1
            else:
                worst = float((output - output_new).abs().max().item())
                prev = out["max_difference"]
                # as text: NaN (an unwritten or poisoned output) does not survive JSON as a number
                out["max_difference"] = f"{worst:.3g}" if prev is None or not worst <= float(prev) else prev
            del inputs, output, output_new
    out["passed_trials"] = passed
    out["pass"] = passed == trials and out["error"] is None
    del model, model_new
    if device == "cuda":
        torch.cuda.empty_cache()
    return out
