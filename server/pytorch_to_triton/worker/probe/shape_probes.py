"""The probes that change where and how many values the entry sees: layouts (non-contiguous copies, one tensor at a
time), rows (prefixes of the batch), sizes around block boundaries, parity notes."""

from __future__ import annotations

from typing import Any

import torch

from ... import tier_rules as tr
from ..device.runtime import RECORDER
from . import probe_inputs as pi
from .outcome import Outcome, Probe, _finite_inputs, _mismatch, _nonfinite, does_not_compile


class LayoutProbes:
    """Uses the Prober's state (self.fn, self.ref, self.shape, self.dtype, self.only, self.emit, ...) and its core
    methods (call, judge, fail, wanted): a mixin of probes.Prober, never used alone."""

    def _layout(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        """Each layout variant as a whole, then, when it fails or is refused, one tensor at a time: which argument
        the failure comes from decides what it means (a refusal of one must not hide the others). A failure only
        through tensors that do not carry the batch (a weight, a packed buffer, a fresh output its callers allocate
        dense) is a verify note, not a P0."""
        b = pi.batch_size(x)
        variants = pi.layouts(x)
        for label, variant in variants.items():
            singles = {f"{label}, input {i} only": (i, v) for i, v in pi.one_at_a_time(x, variant).items()}
            if self.only is not None and not self.wanted("layout", label):
                for name, (_i, v) in singles.items():  # a reproducer of one argument's variant
                    if self.wanted("layout", name):
                        self._layout_try(p, name, v, x, outs, {_i})
                continue
            if self.out_of_time(p):
                continue
            whole = self._layout_try(p, label, variant, x, outs, {i for _n, (i, _v) in singles.items()})
            if label == pi.STRIDED_1D:
                if isinstance(whole, dict):  # a strided weight or bias: aside, not a P0
                    p.failures.remove(whole)
                    p.aside.append({"kind": "1d", "variant": label, "what": whole["what"],
                                    "detail": "only the 1-D tensors (weights, biases) are strided in this variant; "
                                              "the callers of such entries usually pass parameters, which are dense"})
                continue
            if whole == "ok" or self.only is not None:
                continue
            if len(singles) < 2:
                if isinstance(whole, dict) and singles:
                    self._weight_aside(p, whole, next(iter(singles.values()))[0], x, b)
                continue
            if isinstance(whole, dict):
                p.failures.remove(whole)
            found = []
            for name, (i, v) in singles.items():
                if self.out_of_time(p):
                    break
                got = self._layout_try(p, name, v, x, outs, {i})
                if isinstance(got, dict):
                    found.append((i, got))
            if isinstance(whole, dict) and (not found or (whole.get("oob") and not any(r.get("oob") for _i, r in found))):
                p.failures.append(whole)  # only the combination fails (or reads out of bounds): the whole is the evidence
            for i, rec in found:
                self._weight_aside(p, rec, i, x, b)
        # Rows of a wider buffer passed for these inputs: they were among the tensors that variant changed (it
        # changes floating tensors only) and no failure of it, P0 or weight note, came through them.
        row_changed = set(pi.one_at_a_time(x, variants[pi.ROW_STRIDED])) if pi.ROW_STRIDED in p.ran else set()
        row_failed = {i for f in p.failures + p.aside if pi.base_variant(f["variant"]) == pi.ROW_STRIDED
                      for i in f.get("inputs", ())}
        last = [f for f in p.failures if pi.base_variant(f["variant"]) in pi.LASTDIM and f.get("inputs")
                and set(f["inputs"]) <= row_changed - row_failed]
        if last:  # right for any row stride, wrong only when the last dim is strided: an assumption
            for f in last:  # (an out-of-bounds read too: the kernel reads a strided last dim as a dense one)
                p.failures.remove(f)
            p.aside.append({"kind": "lastdim", "variant": last[0]["variant"], "what": last[0]["what"],
                            "detail": f"{pi.ROW_STRIDED} (the last dim unit-stride) passes: the kernel honours the "
                                      "row strides and assumes a unit stride in the last dimension" +
                                      ("; with a strided last dim it reads or writes out of bounds" if
                                       any(f.get("oob") for f in last) else "")})
        self._layout_tiers(p, x)

    @staticmethod
    def _layout_tiers(p: Probe, x: list[Any]) -> None:
        """Issue 45 (tier_rules.layout_kind): what is left failed through a tensor that carries the batch. A layout
        the example gives contiguous is robustness "layouts" unless required, an out-of-bounds access under it too
        (said so); a tensor the example itself passes as a view keeps its failure (its callers give such views)."""
        for f in list(p.failures):
            given = any(isinstance(x[i], torch.Tensor) and not x[i].is_contiguous() for i in f.get("inputs") or ()
                        if i < len(x))
            kind = tr.layout_kind(given)
            if kind is not None:
                p.layout_aside([f], kind, "the example passes these inputs contiguous")

    def _layout_try(self, p: Probe, label: str, variant: list[Any], x: list[Any], outs: list[torch.Tensor],
                    inputs: set[int]) -> dict[str, Any] | str:
        """One layout variant (`inputs`: the tensors it changed): its failure record, 'refused' (a checked
        precondition) or 'ok'."""
        got = self.call(variant)
        mark = len(p.failures)
        if self.judge(p, label, x, got, refusal_ok=True):
            diff = _mismatch(got.outputs or [], outs, self.rtol, self.atol)
            if diff:
                self.fail(p, label, "wrong result on non-contiguous input", detail=diff)
        if len(p.failures) > mark:
            p.failures[-1]["inputs"] = sorted(inputs)
            return p.failures[-1]
        return "refused" if got.error is not None else "ok"

    @staticmethod
    def _weight_aside(p: Probe, rec: dict[str, Any], i: int, x: list[Any], b: int | None) -> None:
        """A failure through input i alone, which does not carry the batch (its first dimension is not the batch's):
        a weight or buffer its callers pass dense; a verify note (P2), not a P0. Out-of-bounds accesses stay."""
        t = x[i]
        if rec.get("oob") or b is None or not isinstance(t, torch.Tensor) or (t.dim() >= 1 and t.shape[0] == b):
            return
        p.failures.remove(rec)
        p.aside.append({"kind": "weight", "variant": rec["variant"], "what": rec["what"], "inputs": [i],
                        "detail": f"only input {i} (shape {tuple(t.shape)}, {str(t.dtype).removeprefix('torch.')}), "
                                  f"which does not carry the batch ({b}), fails non-contiguous; the inputs that carry "
                                  "it pass"})

    def _rows(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        b = pi.batch_size(x)
        per_row = [i for i, t in enumerate(outs) if t.dim() >= 1 and t.shape[0] == b]
        if b is None or not per_row:
            p.not_run = "no batch dimension shared by the inputs and the outputs"
            return
        if self.kb is not None:
            key, why = self.kb.batch(b)
            if key is None:
                p.not_run = why
                return
            p.notes.append(f"the batch is {key}: the first k rows are the problem at {key}=k")
        indexing = pi.indexes_rows(x, b)
        if indexing is not None:
            p.not_run = (f"integer input {indexing} holds values up to the batch size {b} (offsets or indices into the "
                         "rows, a jagged batch): the first k rows are not a smaller problem unless it changes too")
            return
        for label, (k, variant) in pi.row_prefixes(x).items():
            if not self.wanted("rows", label) or self.out_of_time(p):
                continue
            got = self.call(variant)
            if got.error is not None and self.invalid_for_reference(p, label, variant):
                continue
            # an entry's own assert on a prefix it cannot take (a caller's buffer the probe could not cut, held in a
            # tuple) is a checked precondition, as the sizes and layout probes take it: a refusal, not a crash
            if self.judge(p, label, variant, got, refusal_ok=True):
                sub = got.outputs or []
                mine = [sub[i] for i in per_row if i < len(sub)]
                diff = _mismatch(mine, [outs[i][:k] for i in per_row], self.rtol, self.atol)
                if diff and self._reference_couples_rows(x, variant, per_row, k):
                    p.notes.append(f"{label}: rows differ, and so do the reference's: its rows depend on their "
                                   "neighbours (a scale per block of rows), not a fault of the kernel")
                elif diff:
                    self.fail(p, label, "rows differ from the same rows of the full batch", detail=diff)

    def _reference_couples_rows(self, x: list[Any], variant: list[Any], per_row: list[int], k: int) -> bool:
        """The harness's reference gives other rows for a prefix of the batch than for the whole: the function
        itself couples rows (blockwise quantization), so the rows probe cannot judge the kernel."""
        if self.reference is None:
            return False
        if self._ref_full is None:  # the whole batch's reference, once for every prefix that differs
            self._ref_full = self.call(x, fn=self.reference)
        full, part = self._ref_full, self.call(variant, fn=self.reference)
        if full.outputs is None or part.outputs is None:
            return False
        a = [part.outputs[i] for i in per_row if i < len(part.outputs)]
        b = [full.outputs[i][:k] for i in per_row if i < len(full.outputs)]
        return bool(_mismatch(a, b, self.rtol, self.atol))

    def _sizes(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        from ..validation.kernelbench import CandidateInitError

        if self.kb is not None:
            variants, left = self.kb.boundary_sizes()
            p.notes += [f"left out: {w}" for w in left]
        else:
            variants = pi.boundary_shapes(self.shape)
        for label, shape in variants.items():
            if not self.wanted("sizes", label) or self.out_of_time(p):
                continue
            try:
                v = self.inputs(shape)
            except CandidateInitError as e:  # the reference's Model was built at these sizes; ModelNew was not
                p.ran.append(label)
                self.fail(p, label, "ModelNew(*get_init_inputs()) raised", e.exc)
                continue
            except Exception as e:  # noqa: BLE001 - the harness cannot build this size: not the kernel's fault
                p.notes.append(f"{label}: make_inputs refused ({type(e).__name__})")
                continue
            empty = pi.has_empty(shape)
            RECORDER.origin = (tr.ROBUSTNESS, "empty") if empty else (tr.CONTRACT, None)  # its compiles' tier
            try:
                got = self.call(v)
            finally:
                RECORDER.origin = (tr.CONTRACT, None)
            if (got.error is not None or _nonfinite(got.outputs or [])) and self.invalid_for_reference(p, label, v):
                continue
            if self._parity_only(p, label, shape, v, got):
                self.retag(got, "structure")
                continue
            mark = len(p.failures)
            self.judge(p, label, v, got, refusal_ok=True)
            if len(p.failures) > mark and empty:  # a batch of 0: robustness unless the contract says
                rec = p.failures.pop()
                p.aside.append({**rec, "kind": "empty",
                                "detail": rec.get("detail") or rec.get("error") or "an empty dimension"})
            elif len(p.failures) > mark and not got.oob and does_not_compile(got.error):
                # issue 45: the kernel is not built for this size (tl.arange over a head dim of 17): a size that
                # breaks its structure, robustness unless required; its target compile follows (retag)
                rec = p.failures.pop()
                self.retag(got, "structure")
                p.aside.append({**rec, "kind": "structure", "detail": f"the kernel does not compile at this size "
                                f"({rec.get('error') or rec['what']}); the example's size does"[:600]})

    def _parity_only(self, p: Probe, label: str, shape: Any, inputs: list[Any], got: Outcome) -> bool:
        """A failure (not an out-of-bounds access) at an odd size of a dimension the example has even, when the even
        size next to it passes: recorded as a parity note (p.aside), not a failure of the kernel."""
        bad = got.error is not None or (_finite_inputs(inputs) and _nonfinite(got.outputs or []))
        if not bad or got.oob:
            return False
        moved = pi.moved_dim(self.shape, shape)
        if moved is None:
            return False
        key, old, new = moved
        if old % 2 or new % 2 == 0 or new < 1:
            return False
        # The even neighbour that still ends in a partial block (not a multiple of 16): 15 -> 14, 63 -> 62, 17 -> 18.
        even = next((t for t in (new + 1, new - 1) if t >= 2 and t % 16 and t != old), None)
        if even is None:
            return False
        twin = dict(shape) if isinstance(shape, dict) else list(shape)
        twin[key] = even
        twin = twin if isinstance(twin, dict) else tuple(twin)
        try:
            tv = self.inputs(twin)
        except Exception:  # noqa: BLE001 - no even twin to compare with: judge the odd one as it is
            return False
        tgot = self.call(tv)
        if tgot.error is not None or (_finite_inputs(tv) and _nonfinite(tgot.outputs or [])):
            return False
        what = f"{type(got.error).__name__}: {str(got.error)[:160]}" if got.error is not None else \
            "non-finite output"
        p.ran.append(label)
        p.aside.append({"kind": "structure", "variant": label, "what": what, "detail": f"the even size next to it passes "
                        f"(shape {twin})"})
        p.notes.append(f"{label}: fails ({what[:80]}) at an odd size where the example's is even; {twin} passes")
        return True
