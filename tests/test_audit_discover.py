"""The example call when no harness is given (issue 45, part 3): audit/discover.py finds the file's own callers
(caller_sources.py, caller_args.py) and its package's (package_callers.py), AST only; worker/probe/callers.py runs
them in the worker (caller_env.py) and records the entry's first call.

Fixtures are public code copied with a header naming source, version and license (tests/audit_discover_fixtures/):
the Triton tutorials 01-vector-add and 05-layer-norm (MIT, triton-lang/triton @ 545699290b85: module-level script
code, a test called from the module level, perf_report benchmarks), liger-kernel 0.8.5's softmax with its module
wrapper and its test (BSD-2-Clause: a parametrized pytest test of the package, through a wrapper, that imports
`transformers`); corpus files of tests/audit_public_corpus/ for the docstring and `__main__` kinds (read, not
relabelled).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import child_env

from pytorch_to_triton.audit import caller_args, caller_sources, discover
from pytorch_to_triton.audit.probe_plan import plan

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "audit_discover_fixtures"
TUT = "tests/audit_discover_fixtures/tutorials"
LIGER = FIX / "liger" / "src" / "liger_kernel" / "ops" / "softmax.py"


def _rel(p: Path) -> str:
    return str(Path(p).resolve().relative_to(ROOT))


def _found(path: Path) -> discover.Found:
    return discover.find(path.resolve(), ROOT)


# ---- the search (server side, AST only) -------------------------------------------------------------------------
def test_fixtures_are_copied_with_a_header_naming_source_version_and_license() -> None:
    for f in sorted(FIX.rglob("*.py")):
        head = f.read_text(encoding="utf-8").splitlines()[0]
        assert head.startswith("# audit discover fixture: "), f
        assert ("unchanged below this line" in head and "license" in head.lower()) or "stand-in written here" in head, f


def test_a_test_called_from_the_module_level_comes_first_with_that_calls_sizes() -> None:
    found = _found(FIX / "tutorials" / "layer_norm.py")
    assert found.entries == ["LayerNorm.apply"]
    kinds = [(s.kind, s.name) for s in found.sources]
    assert kinds == [("test", "test_layer_norm"), ("main", "<module>"), ("benchmark", "bench_layer_norm")]
    test = found.sources[0]
    assert test.params == {"M": "1151", "N": "8192", "dtype": "torch.float16"} and test.sizes == ["M", "N"]
    assert test.label(_rel, FIX / "tutorials" / "layer_norm.py") == \
        "tests in the file: test_layer_norm(M=1151, N=8192, dtype=torch.float16)"
    # the torch result the test compares its call with, as an expression of that call's arguments, at its tolerance
    assert test.reference == {"expr": "torch.nn.functional.layer_norm(x, w_shape, weight, bias, eps).to(dtype)",
                              "args": ["x", "w_shape", "weight", "bias", "eps"], "keywords": {}, "line": 321,
                              "atol": 0.01, "rtol": 0.0}
    # the module-level calls (the test, then bench_layer_norm.run) are left out when another caller is run
    src = (FIX / "tutorials" / "layer_norm.py").read_text().splitlines()
    assert [src[n - 1] for n in found.script_lines] == ["test_layer_norm(1151, 8192, torch.float16)",
                                                       "bench_layer_norm.run(save_path='.', print_data=True)"]


def test_statements_reading_what_a_script_call_bound_are_left_out_with_it() -> None:
    found = _found(FIX / "tutorials" / "vector_add.py")
    src = (FIX / "tutorials" / "vector_add.py").read_text().splitlines()
    left = [src[n - 1].strip() for n in found.script_lines]
    assert left[0] == "output_triton = add(x, y)" and "print(output_triton)" in left
    assert "print(output_torch)" not in left  # it reads nothing the entry's call bound
    assert left[-1].startswith("benchmark.run(")


def test_a_packages_parametrized_test_reaches_the_entry_through_its_wrapper() -> None:
    found = _found(LIGER)
    assert "LigerSoftmaxFunction.apply" in found.entries
    [src] = found.sources
    assert (src.kind, src.name, src.via) == ("package_wrapper", "test_liger_softmax",
                                            "liger_kernel/transformers/softmax.py::LigerSoftmax")
    # of each parametrization the smallest option; a skipif-marked one (bfloat16 where unsupported) last
    assert src.params == {"shape": "(2, 8)", "dtype": "torch.float32", "atol": "1e-05", "rtol": "1e-05"}
    req = src.request(_rel, ROOT, LIGER)
    assert req["module"] == "test_softmax" and req["paths"] == [str(FIX / "liger")]  # pytest's rootdir
    assert caller_sources.module_name(LIGER.resolve(), ROOT) == ((FIX / "liger" / "src").resolve(), "liger_kernel.ops.softmax")


def test_docstring_examples_and_main_blocks_are_callers() -> None:
    entmax = ROOT / "tests/audit_public_corpus/adasplash/triton_entmax.py"
    [doc] = [s for s in _found(entmax).sources if s.kind == "docstring"]
    assert doc.name == "triton_entmax.__doc__" and "triton_entmax(" in doc.code
    assert entmax.read_text().splitlines()[doc.line - 1].strip().startswith(">>>")
    kmeans = ROOT / "tests/audit_public_corpus/flash_kmeans/centroid_update_triton.py"
    main = [s for s in _found(kmeans).sources if s.name == "__main__"]
    assert main and main[0].kind == "main" and kmeans.read_text().splitlines()[main[0].line - 1].startswith("if __name__")


def test_a_tests_reference_must_be_built_from_the_calls_own_arguments() -> None:
    import ast

    src = ("def test_a(M):\n    x = torch.randn(M)\n    x1 = x.clone()\n    y = add(x, x)\n"
           "    assert torch.allclose(y, x1 + x1)\n\n"
           "def test_b(M):\n    x = torch.randn(M)\n    y = add(x, x)\n    ref = 2 * x\n"
           "    torch.testing.assert_close(ref, y)\n")
    a, b = ast.parse(src).body
    assert caller_args.compared(a, {"add"}) == {}  # x1 is another local: not a function of the call's arguments
    assert caller_args.compared(b, {"add"}) == {"expr": "2 * x", "args": ["x", "x"], "keywords": {}, "line": 11}


def test_a_test_whose_arguments_are_fixtures_is_named_but_not_run() -> None:
    import ast

    tree = ast.parse("import pytest\n\ndef test_x(device, M=4):\n    softmax(torch.ones(M, device=device))\n")
    params, why = caller_args.parameters(tree.body[1], tree)
    assert params == {} and why.startswith("its argument device come from no parametrize, default or call")


def test_no_caller_says_what_was_searched_and_a_non_task_reference_is_not_a_harness(tmp_path: Path) -> None:
    p = plan(FIX / "tutorials" / "vector_add.py", _rel, None, None, None, None, 60.0)  # no root: no search
    assert p.args is None and p.why_not.startswith("no example call: pass harness=")
    target = ROOT / "tests/audit_public_corpus/late_interaction_kernels/varlen.py"
    ref = target.parent / "reference.py"  # the package's own reference code, not a task reference
    p = plan(target, _rel, None, ref, None, None, 60.0, root=ROOT)
    assert p.args is None and "reference.py is neither a task reference" in p.why_not
    assert "no example call found: searched" in p.why_not and "pass harness=" in p.why_not


# ---- the worker runs the caller ------------------------------------------------------------------------------------
def test_caller_env_puts_back_what_a_caller_changes_and_removes_its_stand_ins() -> None:
    from pytorch_to_triton.worker.probe.caller_env import caller_env

    before = (torch.are_deterministic_algorithms_enabled(), os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    with caller_env(interpreter=True, timeout_s=30):
        torch.use_deterministic_algorithms(True)  # liger-kernel's test modules do this at import
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        assert torch.randn(3, device="cuda").device.type == "cpu"  # a caller written for a GPU, on the interpreter
        assert torch.ones(2).cuda().device.type == "cpu"
    assert (torch.are_deterministic_algorithms_enabled(), os.environ.get("CUBLAS_WORKSPACE_CONFIG")) == before
    if not torch.cuda.is_available():
        with pytest.raises((RuntimeError, AssertionError)):
            torch.randn(3, device="cuda")


def test_script_code_gives_the_example_and_its_reproducer_reruns_that_caller(service) -> None:  # noqa: ANN001
    rep = service.audit(path=f"{TUT}/vector_add.py", compile=False)
    [ex] = [c for c in rep.checked if c.startswith("example call: ")]
    assert ex == ("example call: script code in the file: line 90: output_triton = add(x, y); it calls "
                  "add(float32[98432], float32[98432])")
    assert rep.probes and not next(p for p in rep.probes if p["name"] == "example").get("failures")
    repros = [f.reproducer for f in rep.findings + rep.robustness if f.reproducer]
    assert repros and all(f"--caller '{TUT}/vector_add.py::<module>'" in r for r in repros)


def test_a_tests_own_size_is_shrunk_for_the_interpreter_and_the_sizes_probe_moves_it(service) -> None:  # noqa: ANN001
    rep = service.audit(path=f"{TUT}/layer_norm.py", compile=False)
    [ex] = [c for c in rep.checked if c.startswith("example call: ")]
    assert ex.startswith("example call: tests in the file: test_layer_norm(M=1151, N=8192, dtype=torch.float16), "
                         "with M 1151 -> 16 for the CPU interpreter")
    assert "it calls LayerNorm.apply(float16[16, 8192], (8192,), float16[8192], float16[8192], 1e-05)" in ex
    sizes = next(p for p in rep.probes if p["name"] == "sizes")
    assert "shape {'M': 0, 'N': 8192}" in sizes["ran"] and "shape {'M': 16, 'N': 17}" in sizes["ran"]
    ref = next(p for p in rep.probes if p["name"] == "reference")  # the test's own F.layer_norm judges the call
    assert ref["ran"] == ["example vs reference"] and not ref["failures"]
    layout = [f for f in rep.findings + rep.robustness if f.reproducer and "--only 'layout: transposed'" in
              f.reproducer]
    assert layout and f"--caller {TUT}/layer_norm.py::test_layer_norm --only" in layout[0].reproducer


def test_the_reproducer_finds_the_caller_again_and_fails_while_the_variant_does() -> None:
    # the tutorial's layer norm reads x with its row stride and a unit last-dim stride: a transposed x fails
    cmd = [sys.executable, "-m", "pytorch_to_triton.probe_repro", f"{TUT}/layer_norm.py", "--caller",
           f"{TUT}/layer_norm.py::test_layer_norm", "--only", "layout: transposed"]
    out = subprocess.run(cmd, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "FAIL layout: transposed: non-finite output" in out.stdout, out.stderr[-2000:]


def test_a_reproducer_naming_a_caller_the_search_does_not_find_is_refused() -> None:
    from pytorch_to_triton.audit.discover import request_for
    from pytorch_to_triton.errors import UsageError

    req = request_for(FIX / "tutorials" / "layer_norm.py", f"{TUT}/layer_norm.py::test_layer_norm", ROOT)
    assert [s["name"] for s in req["sources"]] == ["test_layer_norm"] and req["entries"] == ["LayerNorm.apply"]
    with pytest.raises(UsageError, match=r"no caller '.*layer_norm.py::test_nothing' .*found: .*::test_layer_norm"):
        request_for(FIX / "tutorials" / "layer_norm.py", f"{TUT}/layer_norm.py::test_nothing", ROOT)


def test_a_caller_that_cannot_run_is_said_and_suspects_get_their_confirming_command(service) -> None:  # noqa: ANN001
    rep = service.audit(path=_rel(LIGER), compile=False)
    why = next(n for n in rep.not_checked if n.startswith("probes did not run"))
    assert ("example call from tests/audit_discover_fixtures/liger/test/transformers/test_softmax.py::"
            "test_liger_softmax not usable: ModuleNotFoundError: No module named 'transformers'") in why
    assert rep.counts["P0"] == 0 and not rep.probes
    rep = service.audit(path="tests/audit_probe_fixtures/rows_dropped.py", compile=False)
    [f] = [f for f in rep.findings if f.id == "grid_floor_division"]
    assert f.severity == "P2" and f.line == 22 and f.why.startswith("verify:")
    assert f.reproducer.startswith("pytorch-to-triton audit tests/audit_probe_fixtures/rows_dropped.py --harness "
                                   "rows_dropped_harness.py  # rows_dropped_harness.py: ENTRY = \"softmax\"")
    assert "softmax's arguments (x)" in f.reproducer and "a batch that is not a multiple of the block" in f.reproducer


def test_a_kernelbench_problem_beside_a_modelnew_file_is_its_example(tmp_path: Path, tmp_service) -> None:  # noqa: ANN001
    import shutil

    kb = ROOT / "tests" / "kernelbench_fixtures"
    shutil.copy(kb / "affine_reference.py", tmp_path / "19_Affine.py")  # not named reference.py: not a task folder
    shutil.copy(kb / "affine_rows_by_cols.py", tmp_path / "kernel.py")
    rep = tmp_service.audit(path="kernel.py", compile=False)
    assert "example call: KernelBench problem beside the file: 19_Affine.py" in rep.checked
    # The problem's get_inputs() are contiguous: the stride bug a transposed view shows is robustness (issue 45's
    # layout rule, tier_rules.layouts_tier), found by the probes with the problem as their harness, not a P0.
    assert rep.probes and rep.counts["P0"] == 0 and "not robust to: non-contiguous input" in rep.verdict, rep.markdown
    [r] = [r for r in rep.robustness if r.check == "probe_layout_noncontiguous"]
    assert r.kind == "layouts" and "--harness 19_Affine.py" in r.reproducer, r

