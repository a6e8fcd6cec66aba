"""target_compile.py / launch_specs.py: kernels the interpreter runs, compiled on this CPU for sm_90 (issue 36)."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from pytorch_to_triton.worker.device import launch_specs
from pytorch_to_triton.worker.device import target_compile as tc

FIX = Path(__file__).parent / "target_compile_fixtures"
TRIAL = "trials/2026-12-04/45_Gemm_Sigmoid_LogSumExp"


def _kernels():
    spec = importlib.util.spec_from_file_location("target_compile_kernels", FIX / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory):
    """The fixtures' launches compiled for sm_90 into a fresh cache, then again from it."""
    import os

    import triton

    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton_cache"))
    try:
        mod = _kernels()
        launches = mod.launches() + [("portability", *mod.min_launch())]
        specs = {name: launch_specs.launch_spec(k, a, kw) for name, k, a, kw in launches}
        first = tc.TargetCompiler([90], triton.__version__)
        first.submit(list(specs.values()))
        section = first.collect()
        t0 = time.perf_counter()
        again = tc.TargetCompiler([90], triton.__version__)
        again.submit(list(specs.values()))
        cached = again.collect()
        yield specs, section, cached, time.perf_counter() - t0
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


def _findings(section, kernel):
    return {f["check"]: f for f in tc.judge(section) if f["evidence"] and
            (f["evidence"].get("kernel") == kernel or kernel in f["message"])}


def test_launch_spec_is_tritons_specialisation():
    mod = _kernels()
    name, kernel, args, kwargs = mod.launches()[0]
    spec = launch_specs.launch_spec(kernel, args, kwargs)
    types = {p["name"]: (p["type"], p.get("attr"), p.get("value")) for p in spec.params}
    assert types["x_ptr"] == ("*fp32", "D", None)  # a fresh CPU tensor: 16-byte aligned
    assert types["n"] == ("i32", "", None)  # 1000 % 16 == 8: not specialised as divisible by 16
    assert types["BLOCK"] == ("constexpr", None, 256)


def test_compile_failure_names_the_line(compiled):
    _, section, _, _ = compiled
    f = _findings(section, "global_scale_kernel")["target_compile"]
    assert f["severity"] == "fail"
    assert "SCALE" in f["message"] and "sm_90" in f["message"] and "Triton" in f["message"]
    src = (FIX / "kernels.py").read_text().splitlines()
    assert "* SCALE" in src[f["evidence"]["line"] - 1]


def test_shared_memory_over_sm90_is_found(compiled):
    _, section, _, _ = compiled
    f = _findings(section, "deep_pipeline_kernel")["target_resources"]
    assert f["severity"] == "fail"  # no autotuner to skip the config: the launch itself fails on the GPU
    assert f["evidence"]["shared"] > tc.SMEM_PER_BLOCK[90] and "num_stages=8" in f["message"]


def test_spills_are_found(compiled):
    _, section, _, _ = compiled
    f = _findings(section, "wide_row_kernel")["register_spills"]
    assert f["severity"] == "warn" and f["evidence"]["n_spills"] > 0 and "num_warps=1" in f["message"]


def test_clean_kernel_has_no_finding_and_resources(compiled):
    _, section, _, _ = compiled
    assert _findings(section, "clean_kernel") == {}
    row = next(r for r in section["rows"] if r["kernel"] == "clean_kernel")
    assert row["ok"] and 0 < row["n_regs"] <= 64 and row["n_spills"] == 0 and row["occupancy"] > 0


def test_deprecation_warning_is_a_portability_finding(compiled):
    import triton

    _, section, _, _ = compiled
    found = _findings(section, "builtin_min_kernel")
    if tuple(int(x) for x in triton.__version__.split(".")[:2]) < (3, 9):  # measured: 3.6 compiles it silently
        assert found == {} and next(r for r in section["rows"] if r["kernel"] == "builtin_min_kernel")["ok"]
        return
    f = found["triton_portability"]
    assert "builtin min" in f["message"] and f["fix"] == "use tl.minimum" and triton.__version__ in f["message"]


def test_second_validation_reads_the_cache(compiled):
    specs, section, cached, took = compiled
    assert cached["cached"] == cached["specialisations"] == len(specs)
    assert [r["ok"] for r in cached["rows"]] == [r["ok"] for r in section["rows"]]
    assert took < 2.0  # no child process: files read back


def test_distinct_keys_count_compiles():
    mod = _kernels()
    _, kernel, (x, out, n), kw = mod.launches()[-1]
    a = launch_specs.launch_spec(kernel, (x, out, 1000), kw)
    b = launch_specs.launch_spec(kernel, (x, out, 1024), kw)  # 1024 % 16 == 0: another binary on a GPU
    c = launch_specs.launch_spec(kernel, (x, out, 2048), kw)  # same divisibility as 1024: the same binary
    assert launch_specs.distinct_keys([a, b, c]) == {"clean_kernel": 2}


def test_trial_stage3_fails_validation_for_sm90(service):
    """The issue's case: validated on the CPU, refused by the H200's compiler (a float global at line 91)."""
    rep = service.validate(reference=f"{TRIAL}/reference.py", candidates=[f"{TRIAL}/stage3.py"], trials=1,
                           only_cases=["small"])
    c = rep.candidates[0]
    assert not c.ok
    f = next(f for f in c.findings if f.check == "target_compile")
    assert "LOG2E" in f.message and "(line 91)" in f.message and "sm_90" in f.message
    tcs = c.model_dump()["target_compile"]
    assert tcs["triton_version"] and tcs["targets"] == ["sm_90"]
    assert {r["kernel"] for r in tcs["rows"]} == {"linear_sigmoid_kernel", "linear_lse_partial_kernel",
                                                  "lse_combine_kernel"}
    assert sum(r["kernel"] == "linear_sigmoid_kernel" for r in tcs["rows"]) >= 5  # every GPU config offered


# The corpus command: a no-GPU benchmark with its sm_90 compile; the default command keeps the target compile in
# validation (the other tests here).
@pytest.mark.corpus
def test_estimate_carries_the_resources_for_its_gpu(tmp_path: Path):
    """run_benchmark without a GPU: the counted launches compiled for the estimate's GPU (L4: sm_89)."""
    import shutil

    from pytorch_to_triton.service import Service

    for p in (Path(__file__).parent / "estimate_fixtures").glob("softmax_*.py"):
        shutil.copy(p, tmp_path / p.name)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="softmax_reference.py", candidates=["softmax_one_pass.py"], gpu="L4")
    finally:
        svc.close()
    res = rep.model_extra["estimate"][0]["resources"]
    assert res["targets"] == ["sm_89"] and res["rows"] and all(r["ok"] for r in res["rows"])
    row = res["rows"][0]
    assert row["n_regs"] > 0 and row["n_spills"] == 0 and 0 < row["occupancy"] <= 1
    # every config in one table of the text (issue 46), not one line naming one config
    assert "| stage | kernel | config | target | registers | spills | shared B | occupancy |" in rep.summary
    assert row["full_size"]  # the dry run's launch at the benchmark's shape, the one the GPU would run
    assert f"| softmax_one_pass.py | {row['kernel']} (full size) | {row['config']} | sm_89 | {row['n_regs']} |" \
        in rep.summary


def _autotuned():
    spec = importlib.util.spec_from_file_location("target_compile_autotuned", FIX / "autotuned.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory: pytest.TempPathFactory):
    """The autotuned fixtures' launches compiled with no budget for optional configs (share 0: what a validation
    does once its share is spent), then read back, then completed as the audit does (share None)."""
    import os

    import triton

    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton_cache"))
    try:
        specs = {name: launch_specs.launch_spec(k.fn, a, kw, wrapper=k) for name, k, a, kw in _autotuned().launches()}
        first = tc.TargetCompiler([90], triton.__version__, share=0.0)
        first.submit(list(specs.values()))
        section = first.collect()
        again = tc.TargetCompiler([90], triton.__version__, share=0.0)
        again.submit(list(specs.values()))
        reread = again.collect()
        audit = tc.TargetCompiler([90], triton.__version__)
        audit.submit(list(specs.values()))
        yield specs, section, reread, audit.collect()
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


def _rows(section, kernel):
    return [r for r in section["rows"] if r["kernel"] == kernel]


def test_budget_still_checks_every_config_in_the_frontend(budgeted):
    """A config the interpreter never ran, refused by Triton's frontend, fails the candidate with no budget left."""
    specs, section, _, _ = budgeted
    assert all(s.autotuned and s.error is None for s in specs.values())
    rows = _rows(section, "late_global_kernel")
    assert len(rows) == 5
    bad = [r for r in rows if r["ok"] is False]
    assert [r["config"].split(", num_warps")[0] for r in bad] == ["BLOCK=64, SCALED=True"]
    f = _findings(section, "late_global_kernel")["target_compile"]
    assert f["severity"] == "fail" and "SCALED=True" in f["message"]
    assert "* SCALE" in (FIX / "autotuned.py").read_text().splitlines()[f["evidence"]["line"] - 1]


def test_budget_still_compiles_the_likeliest_overflow(budgeted):
    """The largest tile x num_stages reaches a cubin whatever the budget: its shared memory is found."""
    _, section, _, _ = budgeted
    f = _findings(section, "deep_tile_kernel")["target_resources"]
    assert f["severity"] == "warn" and "BLOCK_M=128" in f["message"] and "num_stages=8" in f["message"]
    launched = next(r for r in _rows(section, "deep_tile_kernel") if "BLOCK_M=32," in r["config"])
    assert launched["level"] == "full" and launched["n_regs"] > 0  # the interpreter's own config, too


def test_budget_names_the_configs_left_at_the_frontend(budgeted):
    _, section, _, _ = budgeted
    left = [r for r in _rows(section, "deep_tile_kernel") if r["level"] == "front"]
    assert [r["config"].split(", num_warps")[0] for r in left] == ["BLOCK_M=64, BLOCK_N=64, BLOCK_K=32"]
    assert left[0]["ok"] and left[0].get("n_regs") is None  # no resources claimed for it
    note = next(n for n in section["notes"] if n.startswith("deep_tile_kernel:"))
    assert "2 of 3 configs (over its specialisations) compiled to a cubin" in note and "BLOCK_M=64, BLOCK_N=64" in note
    late = next(n for n in section["notes"] if n.startswith("late_global_kernel:"))
    assert "1 refused by the compiler" in late
    assert section["configs"] == 12 and section["configs_to_cubin"] < 12


def test_same_binary_is_compiled_once(budgeted):
    """A loop-free kernel's configs that differ only in num_stages are one binary: one compile, four rows."""
    _, section, _, _ = budgeted
    rows = _rows(section, "loop_free_kernel")
    assert len(rows) == 4 and all(r["ok"] and r["n_regs"] > 0 for r in rows)
    assert sum(r.get("same_binary_as") is None for r in rows) == 1
    assert not any(n.startswith("loop_free_kernel:") for n in section["notes"])


def test_partial_result_is_cached_and_the_audit_completes_it(budgeted):
    specs, section, reread, audit = budgeted
    assert reread["cached"] == reread["specialisations"] == len(specs)  # no child: read back, partial as it was
    assert [r["level"] for r in reread["rows"]] == [r["level"] for r in section["rows"]]
    assert audit["cached"] == 1  # loop_free was complete; the two partial ones are compiled on
    assert all(r["ok"] is False or r["level"] == "full" for r in audit["rows"])
    assert not any("frontend only" in n for n in audit["notes"])
    f = _findings(audit, "late_global_kernel")["target_compile"]
    assert "SCALED=True" in f["message"]


def test_prestarted_child_compiles_and_marks_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The child starts before the first launch (the candidate's module imported meanwhile); once a validation of
    that source has compiled, the next one starts no child up front."""
    import triton

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    name, kernel, args, kwargs = _kernels().launches()[-1]
    assert name == "clean"
    first = tc.TargetCompiler([90], triton.__version__, share=0.0)
    first.prestart(str(FIX / "kernels.py"))
    assert first._child is not None
    first.submit([launch_specs.launch_spec(kernel, args, kwargs)])
    section = first.collect()
    assert [r["ok"] for r in section["rows"]] == [True] and section["child_s"]["import"] >= 0
    again = tc.TargetCompiler([90], triton.__version__, share=0.0)
    again.prestart(str(FIX / "kernels.py"))
    assert again._child is None
    again.submit([launch_specs.launch_spec(kernel, args, kwargs)])
    assert again.collect()["cached"] == 1


def test_plan_notes_say_the_latest_count_once():
    """submit() plans the whole launch list each time: the 'N specialisations launched' note is the latest, once."""
    import triton

    mod = _kernels()
    _, kernel, (x, out, _n), kw = mod.launches()[-1]
    comp = tc.TargetCompiler([90], triton.__version__, max_per_kernel=0)  # plans, compiles nothing
    specs = [launch_specs.launch_spec(kernel, (x, out, n), kw) for n in (1000, 1024)]
    comp.submit(specs[:1])
    comp.submit(specs)
    notes = [n for n in comp.section()["notes"] if "specialisations launched" in n]
    assert notes == ["clean_kernel: 2 specialisations launched by the cases, the first 0 compiled for the target"]
