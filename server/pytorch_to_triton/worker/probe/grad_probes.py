"""The grad probe: an entry with its own backward (an autograd Function) against the harness's reference's autograd,
random and `out.sum()` output gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..validation.poison import POISON
from .bounds import BOUNDS
from .outcome import Outcome, Probe, _cuda_usable, _mismatch, _tensors, refused


def _custom_backward(node: Any, limit: int = 64) -> bool:
    """An autograd graph that reaches an autograd Function's backward (a kernel of the file's own) within `limit`
    nodes of the output: a view or cast after `Function.apply` still counts."""
    seen, todo = 0, [node]
    while todo and seen < limit:
        n = todo.pop()
        if n is None:
            continue
        seen += 1
        if isinstance(n, torch.autograd.function.BackwardCFunction):
            return True
        todo += [m for m, _ in getattr(n, "next_functions", ())]
    return False


class GradProbes:
    """Uses the Prober's state (self.fn, self.ref, self.shape, self.dtype, self.only, self.emit, ...) and its core
    methods (call, judge, fail, wanted): a mixin of probes.Prober, never used alone."""

    def _grad(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        """An entry whose outputs come from an autograd Function has a backward of its own, which no forward probe
        runs (a layernorm backward that ignores normalized_shape, issue 26): its gradients against the reference's,
        for the same output gradients: random ones, and those of `out.sum()` (autograd hands the backward an
        expanded, stride-0 tensor: fbgemm's jagged multiply read it as dense). Only a nonzero gradient that differs
        is a failure; a gradient the entry does not give (None) or gives as zeros is a note (an input it is not meant
        to train, a cos cache). The stride-0 gradient is robustness ("upstream", a layout the callers do not give)
        unless the file's own code differentiates out.sum() (issue 45: an input the problem never gives is never a
        P0), an out-of-bounds access under it too, as under any layout the callers do not give (tier_rules)."""
        if self.reference is None or self.task:
            p.not_run = ("run_validation compares against the task reference: its forward only" if self.task else
                         "the harness has no reference()")
            return
        floats = [i for i, t in enumerate(x) if isinstance(t, torch.Tensor) and t.is_floating_point()
                  and t.element_size() > 1 and t.numel()]
        if not floats:
            p.not_run = "no floating-point input to differentiate"
            return
        for label, expanded in (("gradients vs reference", False), ("gradients of out.sum() vs reference", True)):
            if not self.wanted("grad", label) or self.out_of_time(p):
                continue
            cand = self._grads(x, floats, None, expanded=expanded)
            if isinstance(cand, str):
                p.not_run = cand
                return
            p.ran.append(label)
            mark = len(p.failures)
            self._grad_judge(p, label, x, floats, cand, expanded)
            if expanded:  # robustness "upstream": contract only where the file differentiates a sum (contract.py)
                p.layout_aside(p.failures[mark:], "upstream", "autograd hands the backward out.sum()'s gradient "
                               "expanded (stride 0)")

    def _grad_judge(self, p: Probe, label: str, x: list[Any], floats: list[int], cand: Any, expanded: bool) -> None:
        """The candidate's gradients (or its backward's exception) against the float64 reference's."""
        if isinstance(cand, BaseException):
            if refused(cand) and not Outcome(error=cand).oob:
                p.notes.append(f"{label}: the backward refused ({type(cand).__name__}: {str(cand)[:120]})")
            else:
                self.fail(p, label, "illegal memory access in the backward" if Outcome(error=cand).oob else
                          "crash in the backward", cand)
            return
        wide = [t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in x]
        ref = self._grads(wide, floats, self.reference, outs_used=cand[1], expanded=expanded)
        if isinstance(ref, (str, BaseException)):
            p.notes.append(f"{label}: the reference gives no gradient to compare with ({str(ref)[:160]})")
            return
        self._grad_compare(p, label, floats, cand[0], ref[0], [x[i].dtype for i in floats])

    def _grad_compare(self, p: Probe, label: str, floats: list[int], cand: list[Any], ref: list[Any],
                      dtypes: list[torch.dtype]) -> None:
        bad, notes = [], []
        for i, (g, r) in enumerate(zip(cand, ref, strict=True)):
            rtol, atol = self.tolerance(dtypes[i])  # a gradient has its input's dtype
            if g is None or r is None:
                if r is not None and g is None:
                    notes.append(f"input {floats[i]}: the entry gives no gradient, the reference does")
                continue
            if g.shape != r.shape:
                bad.append(f"input {floats[i]}: gradient shape {tuple(g.shape)} vs {tuple(r.shape)}")
                continue
            if not torch.count_nonzero(r):  # a step (round, argmax) in the reference: nothing to judge an STE by
                continue
            if not torch.count_nonzero(g):
                notes.append(f"input {floats[i]}: the entry's gradient is all zeros, the reference's is not (an input "
                             "it is not meant to train?)")
                continue
            scale = max(1.0, r.abs().max().item())
            diff = _mismatch([g], [r], 10 * rtol, 10 * atol * scale)
            if diff:
                bad.append(f"input {floats[i]}: {diff.removeprefix('output 0: ')}")
        p.notes += [f"{label}: {n}" for n in notes]
        if bad:
            self.fail(p, label, "gradient differs from the reference's", detail="; ".join(bad)[:500],
                      judged_by="reference")

    def _grads(self, x: list[Any], floats: list[int], fn: Callable[..., Any] | None,
               outs_used: list[int] | None = None, expanded: bool = False) -> Any:
        """(gradients of x[floats], the outputs differentiated) for fixed random output gradients (or, `expanded`,
        those of out.sum()); an exception of the call or its backward; or a string saying why there is nothing to
        differentiate."""
        leaves = {i: x[i].detach().clone().requires_grad_(True) for i in floats}
        args = [leaves.get(i, a.clone() if isinstance(a, torch.Tensor) else a) for i, a in enumerate(x)]
        cand = fn is None
        if cand:
            BOUNDS.active, POISON.active = True, True
        try:
            with torch.enable_grad():
                try:
                    res = _tensors((fn or self.entry)(*args))
                except Exception as e:  # noqa: BLE001 - the forward ran in the other probes: only its backward here
                    if Outcome(error=e).oob:
                        return e
                    return (f"the call with inputs that require grad raised {type(e).__name__}: {str(e)[:160]} (an "
                            "entry that writes its inputs in place, or one without a backward)")
                if outs_used is None:
                    outs_used = [k for k, t in enumerate(res) if t.requires_grad and _custom_backward(t.grad_fn)]
                    if not outs_used:
                        return "the entry's outputs do not come from an autograd Function (a forward-only entry)"
                used = [res[k] for k in outs_used if k < len(res) and res[k].requires_grad]
                if not used:
                    return "its outputs do not require grad"
                gen = torch.Generator().manual_seed(1234)
                gos = [torch.ones((), device=t.device, dtype=t.dtype).expand(t.shape) if expanded else
                       torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.device, t.dtype) for t in used]
                grads = torch.autograd.grad(used, [leaves[i] for i in floats], gos, allow_unused=True)
            if self.device == "cuda":
                torch.cuda.synchronize()
            return [None if g is None else g.detach().to("cpu", torch.float64) for g in grads], outs_used
        except Exception as e:  # noqa: BLE001 - a failing backward is what this probe looks for
            if cand and self.device == "cuda" and not _cuda_usable():
                self.poisoned = f"{type(e).__name__}: {str(e)[:160]}"
            return e
        finally:
            if cand:
                BOUNDS.active, POISON.active = False, False
