"""KernelBench form: size constants and overrides, automatic variants, shrinking without a GPU, and the stronger
checks (perturbed parameters, tiny outputs, NaN/inf propagation). Fixtures: tests/kernelbench_fixtures/."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytorch_to_triton.errors import UsageError

FIX = "tests/kernelbench_fixtures"
ROOT = Path(__file__).resolve().parent.parent


def _cand(rep, name: str):
    return next(c for c in rep.candidates if c.candidate.endswith(name))


def _checks(cand) -> dict[str, str]:
    return {f.check: f.severity for f in cand.findings}


def _extra(model, key: str):
    return (model.model_extra or {}).get(key)


# ---- the real worker, through the Service (interpreter on CPU) ------------------------------------------------
def test_default_variants_shrunk_sizes_and_real_shapes(service):
    """The good candidate passes every automatic variant; the report names the sizes and the shapes really run."""
    rep = service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"], trials=1)
    cand = _cand(rep, "affine_good.py")
    assert rep.ok, rep.summary
    names = [c.name for c in cand.cases]
    for expected in ("shrunk", "shrunk:transposed", "shrunk:strided", "odd", "small", "single", "zero", "nan_inf"):
        assert expected in names, names
    assert _extra(cand, "full_size_run") is False
    assert _extra(cand, "sizes_used") == {"batch_size": 64, "dim": 385}
    assert any("full size was not run" in n for n in cand.notes)
    assert "KernelBench at sizes batch_size=64, dim=385: full size not run" in rep.summary
    kb = _extra(cand, "kernelbench")
    assert kb["size_constants"] == {"batch_size": 64, "dim": 2048}
    assert kb["checks"]["nan_inf"].startswith("ran")
    for c in cand.cases:  # every label matches the inputs it ran (issue 18: no small shape on a full-size run)
        sizes = _extra(c, "sizes")
        assert sizes is not None, c.name
        assert c.shape == [[sizes["batch_size"], sizes["dim"]]], (c.name, c.shape, sizes)
    odd = next(c for c in cand.cases if c.name == "odd")
    assert odd.shape == [[63, 385]]
    assert next(c for c in cand.cases if c.name == "zero").shape[0][0] == 0


def test_stride_bug_and_nan_to_zero_are_robustness_findings_and_fail_strict(service):
    """Rows addressed by the column count fail only the layout variants, NaN turned into 0 only the NaN check: the
    problem's get_inputs() never builds either, so both pass with a named robustness finding, and fail strict."""
    cands = [f"{FIX}/affine_rows_by_cols.py", f"{FIX}/affine_nan_to_zero.py"]
    rep = service.validate(reference=f"{FIX}/affine_reference.py", trials=1, candidates=cands)
    assert rep.ok and rep.verdict.startswith("pass; not robust to: non-contiguous input, NaN/inf input"), rep.verdict
    stride = _cand(rep, "affine_rows_by_cols.py")
    assert stride.ok and not _checks(stride)
    assert {r.kind for r in stride.robustness} == {"layouts"} and "mismatch" in {r.check for r in stride.robustness}
    assert ".contiguous()" in stride.robustness[0].fix
    bad = {c.name for c in stride.cases if not c.ok}
    assert bad and bad <= {"shrunk:transposed", "shrunk:strided"}, bad
    assert {c.tier for c in stride.cases if c.name in bad} == {"robustness"}
    nan = _cand(rep, "affine_nan_to_zero.py")
    assert nan.ok and [(r.kind, r.check) for r in nan.robustness] == [("nan", "nan_propagation")]
    assert [c.name for c in nan.cases if not c.ok] == ["nan_inf"]
    strict = service.validate(reference=f"{FIX}/affine_reference.py", trials=1, candidates=cands, strict=True,
                              only_cases=["shrunk", "transposed", "strided", "nan_inf"])
    assert not strict.ok and "--strict" in strict.reproduce
    assert _checks(_cand(strict, "affine_rows_by_cols.py")).get("mismatch") == "fail"
    assert _checks(_cand(strict, "affine_nan_to_zero.py")).get("nan_propagation") == "fail"


def test_perturbed_parameters_catch_ignored_layernorm_affine(service):
    """LayerNorm's default weight 1 / bias 0 would hide a candidate that ignores them; perturbed, it fails."""
    rep = service.validate(reference=f"{FIX}/layernorm_reference.py", trials=1, only_cases=["full", "odd"],
                           candidates=[f"{FIX}/layernorm_good.py", f"{FIX}/layernorm_ignores_affine.py"])
    good, bad = _cand(rep, "layernorm_good.py"), _cand(rep, "layernorm_ignores_affine.py")
    assert good.ok, rep.summary
    assert _extra(good, "full_size_run") is True  # 64 x 256 is small enough for the interpreter as it is
    assert _extra(good, "kernelbench")["checks"]["parameters"].startswith("perturbed")
    assert not bad.ok and "mismatch" in _checks(bad)


def test_tiny_outputs_warn_and_get_a_relative_check(service):
    """Outputs of ~1e-5 against atol 1e-4: a warning, and a 20% error that atol alone passes fails."""
    rep = service.validate(reference=f"{FIX}/tiny_reference.py", trials=1, only_cases=["full"],
                           candidates=[f"{FIX}/tiny_good.py", f"{FIX}/tiny_off_20pct.py"])
    good, bad = _cand(rep, "tiny_good.py"), _cand(rep, "tiny_off_20pct.py")
    assert good.ok and _checks(good).get("small_outputs") == "warn", rep.summary
    assert not bad.ok and _checks(bad).get("relative_mismatch") == "fail"
    assert "mismatch" not in _checks(bad)  # the absolute tolerance alone passed it: exactly the vacuous case


def test_sizes_and_cases_override_module_constants(service):
    """sizes pin constants (no shrinking); a case's sizes go on top; every record shows what it ran."""
    rep = service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"], trials=1,
                           sizes={"dim": 300}, cases=[{"name": "three_rows", "sizes": {"batch_size": 3}}],
                           only_cases=["sized", "three_rows", "odd", "sized:strided"])
    cand = _cand(rep, "affine_good.py")
    assert rep.ok, rep.summary
    by = {c.name: c for c in cand.cases}
    assert set(by) == {"sized", "three_rows", "odd", "sized:strided"}
    assert _extra(by["sized"], "sizes") == {"batch_size": 64, "dim": 300}  # small enough: nothing shrunk
    assert _extra(cand, "full_size_run") is False  # sizes were overridden: not the problem's full size
    assert by["three_rows"].shape == [[3, 300]]
    assert by["odd"].shape == [[63, 299]]  # the edge variants change pinned sizes too
    assert "--sizes dim=300" in rep.reproduce


def test_unknown_size_and_shape_case_are_usage_errors(service):
    with pytest.raises(UsageError, match=r"'batch' is not a size.*batch_size=64, dim=2048"):
        service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"],
                         sizes={"batch": 7})
    with pytest.raises(UsageError, match="gives sizes, not shape"):
        service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"],
                         cases=[{"name": "big", "shape": [4, 4]}])
    with pytest.raises(UsageError, match="non-negative integer"):
        service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"],
                         sizes={"dim": -1})
    with pytest.raises(UsageError, match="function form: give cases with a shape"):
        service.validate(reference="tests/tasks/add_reference.py", candidates=["tests/tasks/add_stage1.py"],
                         sizes={"n": 7})
    with pytest.raises(UsageError, match="needs a shape .* or sizes"):
        service.validate(reference="tests/tasks/add_reference.py", candidates=["tests/tasks/add_stage1.py"],
                         cases=[{"name": "nothing"}])


def test_cli_sizes_flag() -> None:
    from pytorch_to_triton.cli import _sizes, build_parser

    assert _sizes("batch_size=7, dim=1000") == {"batch_size": 7, "dim": 1000}
    assert _sizes('{"dim": 3}') == {"dim": 3}
    with pytest.raises(UsageError, match="name=integer"):
        _sizes("batch_size:7")
    args = build_parser().parse_args(["validate", "r.py", "c.py", "--sizes", "dim=5"])
    assert args.sizes == "dim=5"


# ---- the size machinery in-process (no worker) ----------------------------------------------------------------
LINEAR_SRC = '''
import torch
import torch.nn as nn

batch_size = 64
in_features = 1024
out_features = 512
input_shape = (16, 32)
kernel_size = 3
dim = 1
UNUSED = 12345


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x, y):
        return self.norm(self.fc(x)) + y.sum() * 0


def _make(n):
    return torch.randn(n, in_features)


def get_inputs():
    return [_make(batch_size), torch.randn(*[s for s in input_shape], kernel_size, dim)]


def get_init_inputs():
    return [in_features, out_features]
'''


@pytest.fixture()
def linear_mod(tmp_path: Path):
    sys.path.insert(0, str(ROOT / "server"))
    from pytorch_to_triton.worker.validation.tasks import load_module

    p = tmp_path / "linear_reference.py"
    p.write_text(LINEAR_SRC)
    return load_module(p, "ref")


def test_size_constants_follow_bytecode(linear_mod) -> None:
    from pytorch_to_triton.worker.validation import sizes as sz

    consts = sz.size_constants(linear_mod)
    # batch_size and in_features through the helper _make, the tuple by element; UNUSED is never read
    assert consts == {"batch_size": 64, "input_shape[0]": 16, "input_shape[1]": 32, "kernel_size": 3, "dim": 1,
                      "in_features": 1024, "out_features": 512}
    assert list(consts)[0] == "batch_size"  # order of first use: the "zero" variant empties the first one
    assert sz.varied(consts, {}) == ["batch_size", "input_shape[0]", "input_shape[1]", "in_features", "out_features"]
    with sz.sized(linear_mod, {"input_shape[1]": 5, "batch_size": 2}):
        assert linear_mod.input_shape == (16, 5) and linear_mod.batch_size == 2
    assert linear_mod.input_shape == (16, 32) and linear_mod.batch_size == 64
    assert "UNUSED" in sz.module_ints(linear_mod)


def test_shrink_and_plan_keep_the_model_consistent(linear_mod) -> None:
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    p = cs.plan(linear_mod, "cpu", None, None)
    main = p.main.sizes
    assert p.main.name == "shrunk" and not p.full_size_run
    n, accepted = sz.footprint(linear_mod, main)
    assert accepted and n is not None and n <= sz.CPU_MAX_ELEMS
    assert max(v for k, v in main.items() if k in sz.varied(p.defaults, {})) <= sz.CPU_MAX_DIM
    assert main["kernel_size"] == 3 and main["dim"] == 1  # structure is left alone
    gpu = cs.plan(linear_mod, "cuda", {"out_features": 40}, [{"name": "b7", "sizes": {"batch_size": 7}}])
    assert gpu.main.name == "sized" and gpu.main.sizes["out_features"] == 40 and gpu.main.sizes["in_features"] == 1024
    assert {c.name for c in gpu.cases} >= {"sized", "odd", "small", "single", "zero", "nan_inf", "b7"}
    assert gpu.cases[0].sizes["out_features"] == 40 and "odd" in {c.name for c in gpu.cases}
    assert next(c for c in gpu.cases if c.name == "odd").sizes["out_features"] == 39  # edge variants change it
    with pytest.raises(Exception, match="only_cases names"):
        cs.plan(linear_mod, "cpu", None, None, only=["nope"])


def test_sizes_equal_to_the_full_size_are_the_full_size(linear_mod) -> None:
    """Issue 48: `--sizes` with the problem's own values is its full size, not "sizes ...: full size not run"."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    own = {k: v for k, v in sz.size_constants(linear_mod).items() if k in ("batch_size", "in_features")}
    p = cs.plan(linear_mod, "cuda", own, None)
    assert p.full_size_run and p.main.name == "full", (p.main.name, p.notes)
    assert not any("override the problem's own" in n for n in p.notes)
    moved = cs.plan(linear_mod, "cuda", {**own, "out_features": 40}, None)
    assert not moved.full_size_run and moved.main.name == "sized"
    assert any(n.startswith("sizes out_features=40 override") for n in moved.notes), moved.notes


def test_verdict_line_names_the_sidecars_pins() -> None:
    """Issue 48: a [sizes] pin that kept a GPU run off the full size is named in the verdict line, with where CPU-only
    pins belong; an explicit sizes= (or pins at the problem's own values) is not blamed on the sidecar."""
    from pytorch_to_triton.schemas import CandidateReport
    from pytorch_to_triton.service import _validation_verdict

    def verdict(sidecar_sizes, device: str) -> str:
        rep = CandidateReport.model_validate({
            "candidate": "stage1.py", "ok": True, "full_size_run": False,
            "sizes_used": {"batch_size": 2, "dim": 300},
            "kernelbench": {"size_constants": {"batch_size": 2048, "dim": 300}}})
        runtime = {"interpreter": device == "cpu", "worker_device": device}
        return _validation_verdict("reference.py", [rep], runtime, 0, 1, sidecar_sizes).summary

    gpu = verdict({"batch_size": 2, "dim": 300}, "cuda")
    assert ("[KernelBench at sizes batch_size=2, dim=300, pinned by the sidecar ([sizes] batch_size=2): full size not "
            "run; pins for the CPU only go in [sizes.interpreter]]") in gpu, gpu
    cpu = verdict({"batch_size": 2}, "cpu")
    assert "pinned by the sidecar ([sizes] batch_size=2): full size not run]" in cpu and "[sizes.interpreter]" not in cpu
    assert "[KernelBench at sizes batch_size=2, dim=300: full size not run]" in verdict({}, "cuda")


def test_prepare_rebuilds_perturbs_and_syncs(linear_mod, tmp_path: Path) -> None:
    import torch

    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation.loader import load_task
    from pytorch_to_triton.worker.validation.tasks import Case

    cand = tmp_path / "linear_cand.py"
    cand.write_text(LINEAR_SRC.replace("class Model(", "class ModelNew("))
    task = load_task(tmp_path / "linear_reference.py", cand, None, None, "cpu")
    assert task.ref_fn is None  # nothing is built at the full size before a case asks for sizes
    xs = task.make_inputs(Case("a", {"in_features": 24, "batch_size": 3}, torch.float32, "cpu", 0))
    assert list(xs[0].shape) == [3, 24] and task.ref_model.fc.in_features == 24
    w = task.ref_model.norm.weight
    assert not torch.allclose(w, torch.ones_like(w))  # LayerNorm's identity weight was perturbed
    assert torch.equal(task.cand_fn.__wrapped__.norm.weight, w) and torch.equal(task.cand_fn.__wrapped__.fc.weight, task.ref_model.fc.weight)
    assert task.kb.parameters.startswith("perturbed")
    first = task.ref_model
    task.make_inputs(Case("b", {"in_features": 24, "batch_size": 5}, torch.float32, "cpu", 1))
    assert task.ref_model is first  # get_init_inputs unchanged: the models are kept
    task.make_inputs(Case("c", {"in_features": 8}, torch.float32, "cpu", 1))
    assert task.ref_model.fc.in_features == 8
    task.kb.restore()
    assert task.ref_mod.in_features == 1024
    assert cs.perturb(torch.nn.Linear(2, 2), 0) == 2


def test_benchmark_specs_and_models_follow_sizes(linear_mod, tmp_path: Path) -> None:
    """run_benchmark's KernelBench path (GPU-only as a tool; its size handling runs anywhere): the specs carry the
    sizes, and every model is re-built for them, a broken ModelNew becoming that row's error."""
    import torch

    from pytorch_to_triton.worker.validation import kernelbench as kb
    from pytorch_to_triton.worker.validation import sizes as sz
    from pytorch_to_triton.worker.validation.loader import load_task
    from pytorch_to_triton.worker.validation.tasks import Case, TaskError

    ref = tmp_path / "linear_reference.py"
    good = tmp_path / "good.py"
    good.write_text(LINEAR_SRC.replace("class Model(", "class ModelNew("))
    broken = tmp_path / "broken.py"
    broken.write_text(LINEAR_SRC.replace("class Model(", "class ModelNew(").replace(
        "super().__init__()", "super().__init__()\n        assert in_features > 100, 'needs wide inputs'"))
    base = load_task(ref, None, None, None, "cpu")
    assert kb.bench_specs(base, {}) == [("full", sz.size_constants(linear_mod), None)]
    specs = kb.bench_specs(base, {"sizes": {"in_features": 16}, "cases": [{"name": "b2", "sizes": {"batch_size": 2}}]})
    assert specs == [("b2", {**sz.size_constants(linear_mod), "in_features": 16, "batch_size": 2}, None)]
    sweep = kb.bench_specs(base, {"sweep": {"param": "in_features", "values": [8, 16]}})
    assert [s[1]["in_features"] for s in sweep] == [8, 16] and sweep[0][2] == 8.0
    with pytest.raises(TaskError, match="size overrides"):
        kb.bench_specs(base, {"cases": [{"name": "x", "shape": [4, 4]}]})
    cands = [("good.py", load_task(ref, good, None, None, "cpu")), ("broken.py", load_task(ref, broken, None, None, "cpu"))]
    assert kb.bench_setup(base, cands, specs, {}, torch.bfloat16) == torch.float32  # the problem's own dtype
    case = Case("b2", specs[0][1], torch.float32, "cpu", 0)
    ready = kb.prepare_for_bench(base, cands, case)
    assert base.ref_model.fc.in_features == 16 and ready[0][1].cand_fn.__wrapped__.fc.in_features == 16
    assert torch.equal(ready[0][1].cand_fn.__wrapped__.fc.weight, base.ref_model.fc.weight)  # same seed, no perturbation
    assert base.kb.parameters.startswith("seeded initialization")
    assert isinstance(ready[1][1], kb.CandidateInitError) and "needs wide inputs" in str(ready[1][1])


def test_variant_the_reference_rejects_falls_back_or_is_skipped(service):
    """An odd dim the reference refuses: odd and single fall back to batch_size alone; a note says so."""
    rep = service.validate(reference=f"{FIX}/affine_even_reference.py", candidates=[f"{FIX}/affine_good.py"],
                           trials=1, only_cases=["odd", "single"])
    cand = _cand(rep, "affine_good.py")
    assert rep.ok, rep.summary
    by = {c.name: c for c in cand.cases}
    assert set(by) == {"odd_batch_size", "single_batch_size"}, set(by)
    assert by["odd_batch_size"].shape == [[15, 64]] and by["single_batch_size"].shape[0][0] == 1
    assert any("reference rejects the odd variant" in n and "ran odd_batch_size" in n for n in cand.notes)


def test_long_variant_reaches_past_two_of_the_candidates_blocks(service):
    """Issue 29 item 2: the shrunk sizes and LONG_DIM (333) fit in one 1024-wide chunk, where a loop that keeps only
    the last chunk is right; the long_dim variant reads the candidate's block from its launches and goes to 2049."""
    rep = service.validate(reference=f"{FIX}/rowsum_reference.py", trials=1,
                           candidates=[f"{FIX}/rowsum_good.py", f"{FIX}/rowsum_chunk_reset.py"])
    good, bad = _cand(rep, "rowsum_good.py"), _cand(rep, "rowsum_chunk_reset.py")
    assert good.ok, rep.summary
    assert not bad.ok, rep.summary
    failing = {c.name for c in bad.cases if not c.ok}  # the tiles case (issue 36 item 4) reaches past them too
    assert {"long_dim"} <= failing <= {"long_dim", "tiles"}, [(c.name, c.ok) for c in bad.cases]
    assert next(c for c in good.cases if c.name == "long_dim").shape[0][1] == 2049
    assert any("long_dim: dim=2049 instead of 333, past two of the candidate's 1024-wide blocks" in n
               for n in good.notes), good.notes


def test_a_subset_run_names_the_case_its_sizes_belong_to(service):
    """--only-cases odd: the summary said 'KernelBench at sizes <the shrunk main case>' for sizes it never ran."""
    rep = service.validate(reference=f"{FIX}/rowsum_reference.py", trials=1, only_cases=["odd"],
                           candidates=[f"{FIX}/rowsum_good.py"])
    assert "[KernelBench case odd at sizes batch_size=15, dim=385: full size not run]" in rep.summary, rep.summary


def test_float64_unavailable_is_said_once_and_reproduce_keeps_the_cases(service):
    """Issue 40: a lambda over the fp32 module makes the float64 reference fail on every case; the note comes once.
    The reproduce line keeps --cases (it dropped them)."""
    cases = [{"name": "b3", "sizes": {"batch_size": 3}}]
    rep = service.validate(reference=f"{FIX}/lambda_mlp_reference.py", candidates=[f"{FIX}/lambda_mlp_good.py"],
                           trials=2, cases=cases, only_cases=["full", "odd", "b3"])
    cand = rep.candidates[0]
    assert cand.ok, rep.summary
    assert len({c.name for c in cand.cases}) >= 3
    notes = [n for n in cand.notes if n.startswith("float64 reference unavailable")]
    assert len(notes) == 1, cand.notes
    assert '--cases \'[{"name":"b3","sizes":{"batch_size":3}}]\'' in rep.reproduce, rep.reproduce


def test_a_robustness_failure_that_is_the_contract_failure_stays_with_its_case(service):
    """Issue 40: a candidate wrong on the main case fails the layout, NaN and extreme variants the same way; those
    are not reported as 'not robust to ...' findings with their own fixes, a note says why."""
    rep = service.validate(reference=f"{FIX}/tiny_reference.py", candidates=[f"{FIX}/tiny_off_20pct.py"], trials=1,
                           only_cases=["full", "full:transposed", "full:strided", "extreme"])
    cand = rep.candidates[0]
    assert not cand.ok and not cand.robustness, [r.title for r in cand.robustness]
    assert rep.verdict.startswith("fail") and "not robust" not in rep.verdict, rep.verdict
    assert any("failed the same way as contract case full" in n for n in cand.notes), cand.notes
    assert any(not c.ok and ((c.model_extra or {}).get("tier") or getattr(c, "tier", None)) == "robustness"
               for c in cand.cases)


def test_a_stateful_reference_keeps_its_state_through_the_memory_estimate(service):
    """issue 40's trial: a reference that assigns its state on every call (33_VanillaRNN's `self.hidden`) was run
    once on fake tensors by the memory estimate and kept fake tensors as its state: every case crashed on the
    reference's side. The estimate puts the module's state back (memory.state_kept)."""
    rep = service.validate(reference=f"{FIX}/stateful_reference.py", candidates=[f"{FIX}/stateful_good.py"], trials=1)
    assert rep.ok, rep.summary
    assert not any("fake" in str(c.error or "").lower() for c in rep.candidates[0].cases), rep.summary
