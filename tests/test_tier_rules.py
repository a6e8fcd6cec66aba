"""tier_rules.py: the one module that decides the tier of an input, for run_validation and audit_kernel (issue 45)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from pytorch_to_triton import tier_rules as tr


def test_layouts_the_problem_builds_contiguous_are_robustness_unless_required_or_declared() -> None:
    assert tr.layouts_tier(None, [], kernelbench=False)[:2] == (True, tr.ROBUSTNESS)
    assert tr.layouts_tier(None, ["layouts"], kernelbench=True)[:2] == (True, tr.CONTRACT)
    assert tr.layouts_tier(True, [], kernelbench=False)[:2] == (True, tr.CONTRACT)
    assert tr.layouts_tier(True, [], kernelbench=True)[:2] == (True, tr.ROBUSTNESS)  # get_inputs() decides there
    assert tr.layouts_tier(False, ["layouts"], kernelbench=False)[0] is False


def test_a_layout_the_example_gives_contiguous_is_robustness_and_a_view_it_gives_is_contract() -> None:
    assert tr.layout_kind(False) == "layouts" and tr.tier_of("layouts", []) == tr.ROBUSTNESS
    assert tr.layout_kind(False, "weight") == "weight" and tr.tier_of("weight", ["layouts"]) == tr.CONTRACT
    assert tr.layout_kind(True) is None and tr.tier_of(tr.layout_kind(True), []) == tr.CONTRACT
    assert tr.title("layouts") == "non-contiguous input"  # run_validation's words


def test_with_a_task_reference_every_probe_input_has_a_robustness_kind_but_the_validators_own_cases() -> None:
    assert {p: tr.probe_kind(p) for p in ("layout", "rows", "sizes", "magnitude", "sentinel", "dtype", "grad")} == {
        "layout": "layouts", "rows": "rows", "sizes": "sizes", "magnitude": "extreme", "sentinel": "sentinel",
        "dtype": "dtype", "grad": "grad"}
    assert tr.probe_kind("layout", "lastdim") == "lastdim"  # the probe's finer kind wins
    assert all(tr.probe_kind(p) is None for p in ("example", "repeat", "reference"))
    assert all(k in tr.AUDIT_KINDS and tr.title(k) != k for k in tr.PROBE_KINDS.values())
    assert tr.tier_of("rows", ["rows"]) == tr.CONTRACT and tr.tier_of("sizes", []) == tr.ROBUSTNESS


@triton.jit
def _k(x_ptr, n, BS: tl.constexpr):  # a launch's specialisation needs a real @triton.jit function (in a file)
    pass


def test_a_specialisation_takes_the_tier_of_its_first_launch_until_a_contract_call_launches_it() -> None:
    """The worker's LaunchRecorder tags each specialisation with the tier of the call that first launched it
    (run_validation's case, a probe variant): a contract launch of the same key makes it contract; target_compile's
    judge carries the tier into its findings (issue 45: compile findings follow the tier of their sizes)."""
    from pytorch_to_triton.worker.device.runtime import LaunchRecorder
    from pytorch_to_triton.worker.device.target_compile import judge

    rec = LaunchRecorder()
    rec.record_launches(True)
    x = torch.zeros(4)
    rec.origin = (tr.ROBUSTNESS, "empty")
    empty = rec.note_spec(_k, (x, 4), {"BS": 0})
    rec.origin = (tr.CONTRACT, None)
    main = rec.note_spec(_k, (x, 4), {"BS": 16})
    rec.origin = (tr.ROBUSTNESS, "layouts")
    assert rec.note_spec(_k, (x, 4), {"BS": 16}) == main and empty != main
    assert [(s.tier, s.kind) for s in rec.launch_specs()] == [(tr.ROBUSTNESS, "empty"), (tr.CONTRACT, None)]
    row = {"kernel": "_k", "target": "sm_90", "ok": False, "config": "BS=0", "error": "ValueError: arange", "line": 9,
           "tier": tr.ROBUSTNESS, "kind": "empty"}
    (f,) = judge({"triton_version": "3.9.0", "rows": [row]})
    assert (f["check"], f["tier"], f["kind"]) == ("target_compile", tr.ROBUSTNESS, "empty")
    rec.origin = (tr.CONTRACT, None)
    rec.note_spec(_k, (x, 4), {"BS": 0})  # the same key launched by a contract case: contract from now on
    assert [(s.tier, s.kind) for s in rec.launch_specs()] == [(tr.CONTRACT, None)] * 2
    rec.record_launches(True)
    assert rec.origin == (tr.CONTRACT, None) and not rec.specs
