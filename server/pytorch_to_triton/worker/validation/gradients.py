"""The gradients of one case: the candidate's input gradients against the float64 reference's, the same upstream
gradient on both sides, under the case's tolerance for each gradient (compare.Tolerance: the declared or default one
plus the reference's own error, from its backward in the input dtype)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any

import torch

from ..device.runtime import _sync
from . import compare as cmp
from . import memory as mem
from .nest import flatten as _flatten
from .nest import tensors as _tensors
from .poison import POISON
from .tasks import Case, Task, clone_inputs, dtype_name, upcast


class Gradients:
    """Uses the Validator's state (self.device, self.args, self.case, self.notes) and its methods (find, _reference,
    _candidate, _candidate_error, _harness_oom): a mixin of validate.Validator, never used alone."""

    # ---- gradients ------------------------------------------------------------------------------
    def run_gradients(self, task: Task, name: str, shape: Any, dtype: torch.dtype) -> dict[str, Any] | None:
        """Compare input gradients of candidate vs reference (float64) for one case."""
        seed = (int(self.args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"grad:{name}:{dtype}".encode())) % 2**31
        case = Case(name, shape, dtype, self.device, seed)
        self.case = case
        inputs = task.make_inputs(case)
        idx = getattr(task.ref_mod, "GRAD_INPUTS", None)
        if idx is None:
            idx = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()]
        if not idx or sum(t.numel() for t in _tensors(inputs)) == 0:
            return None
        label = f"{name}:grad"
        rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": 0, "seed": seed, "ok": False,
                               "shape": [list(t.shape) for t in _tensors(inputs)]}

        def run(fn: Callable, xs: list[Any]) -> list[torch.Tensor | None]:
            # The callers pass fresh copies (upcast / clone_inputs): detach() shares them instead of a third copy.
            xs = [x.detach().requires_grad_(i in idx) if isinstance(x, torch.Tensor) and i in idx else x
                  for i, x in enumerate(xs)]
            outs = [o for o in _flatten(fn(*xs)) if isinstance(o, torch.Tensor) and o.requires_grad]
            g = torch.Generator(device="cpu").manual_seed(seed + 1)
            # The same upstream gradient for both sides: drawn, rounded to the candidate's dtype, then cast to
            # each side's output dtype (the float64 reference must not see digits the candidate never got).
            grads = [torch.randn(o.shape, generator=g).to(dtype).to(o.device, o.dtype) for o in outs]
            torch.autograd.backward(outs, grads)
            _sync(self.device)
            return [xs[i].grad for i in idx]

        try:
            ref_g = run(task.ref_fn, upcast(inputs))
        except Exception as e:
            if not mem.is_oom(e):
                raise
            mem.forget(e)
            raise self._harness_oom(label, rec, e) from None
        try:  # the reference's own backward in the input dtype: its error vs float64 is the gradients' yardstick
            native_g: list[torch.Tensor | None] = run(task.ref_fn, clone_inputs(inputs))
        except Exception as e:  # noqa: BLE001 - e.g. no backward in this dtype: the declared tolerance alone
            mem.forget(e)
            native_g = [None] * len(idx)
        try:
            POISON.float_value, POISON.int_offset, POISON.active = math.nan, 0, True
            cand_g = run(task.cand_fn, clone_inputs(inputs))
        except Exception as e:  # noqa: BLE001
            self._candidate_error(rec, label, e, "backward raised ")
            del ref_g, inputs
            mem.release(self.device)
            return rec
        finally:
            POISON.active = False
        ok = True
        outs = []
        for i, r, c, nat in zip(idx, ref_g, cand_g, native_g):
            if r is None or c is None:
                if (r is None) != (c is None):
                    what = ("missing: the candidate's output carries no autograd graph to this input; implement "
                            "backward (torch.autograd.Function) or mark a forward-only stage SUPPORTS_BACKWARD = False"
                            if c is None else "extra: the reference gives no gradient for it")
                    self.find("gradient_mismatch", label, f"input {i}: gradient is {what}")
                    ok = False
                continue
            own = cmp.own_error(nat, r) if nat is not None and nat.shape == r.shape else None
            tol = cmp.tolerance(inputs[i].dtype, self.args.get("tolerances_merged"), self.case, own)
            if c.shape != r.shape:
                self.find("gradient_mismatch", label, f"input {i}: gradient shape {list(c.shape)} vs {list(r.shape)}")
                ok = False
                continue
            m = cmp.compare(c, r, tol.rtol, tol.atol, own=tol.own)
            if not m["ok"]:
                self.find("gradient_mismatch", label, f"gradient of input {i}: {m['mismatches']} of {m['numel']} "
                          f"elements outside {tol.describe()}; max abs err {m['max_abs_err']:.3g}", m["worst"])
                ok = False
            outs.append({"input": i, **{k: m[k] for k in ("max_abs_err", "max_rel_err", "rel_l2_err", "mismatches")}})
        rec.update(ok=ok, outputs=outs, max_abs_err=max((o["max_abs_err"] for o in outs), default=0.0),
                   max_rel_err=max((o["max_rel_err"] for o in outs), default=0.0),
                   rel_l2_err=max((o["rel_l2_err"] for o in outs), default=0.0),
                   mismatches=sum(o["mismatches"] for o in outs))
        return rec
