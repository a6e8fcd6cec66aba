"""The task sidecar (<reference>.p2t.toml): checked with clear errors, read by every tool, explicit args win."""

from __future__ import annotations

import shutil
import types
from pathlib import Path

import pytest

from pytorch_to_triton import sidecar
from pytorch_to_triton.errors import UsageError

TASKS = Path(__file__).parent / "tasks"
KB = Path(__file__).parent / "scaffold_fixtures" / "kb_scaled_relu.py"
KB_PROBLEM = sidecar.read_problem(KB.read_text())
FN_PROBLEM = sidecar.read_problem((TASKS / "add_reference.py").read_text())

GOOD_KB = '''
notes = """N is a multiple of 4; inputs contiguous."""
source = "KernelBench/level1/19_ReLU.py"
dtypes = ["fp32", "bfloat16"]
[sizes]
dim = 64
[tolerances.bfloat16]
rtol = 2e-2
atol = 2e-2
reason = "bf16 output rounding, see references/tolerances.md"
[tolerances.float32]
preset = "tf32"
reason = "tl.dot in TF32 on the GPU"
[[cases]]
name = "odd"
sizes = { batch_size = 7, dim = 1000 }
[bench]
bytes = "2 * 4 * batch_size * dim"
flops = "sum(numel(t) for t in inputs)"
sizes = { batch_size = 4096 }
'''


def test_a_good_sidecar_becomes_tool_arguments() -> None:
    side = sidecar.parse(GOOD_KB, Path("reference.p2t.toml"), KB_PROBLEM)
    assert KB_PROBLEM.kernelbench and KB_PROBLEM.sizes == {"batch_size": 4, "dim": 300}
    assert side.dtypes == ["float32", "bfloat16"] and side.notes.startswith("N is a multiple")
    args, used = sidecar.for_validation(side, dtypes=None, cases=None, tolerances=None, sizes=None)
    assert args["dtypes"] == ["float32", "bfloat16"] and args["sizes"] == {"dim": 64}
    assert args["sizes_sidecar"] == {"dim": 64}  # [sizes] pins every run: the verdict line names them (issue 48)
    assert args["cases"] == [{"name": "odd", "sizes": {"batch_size": 7, "dim": 1000}}]
    assert args["tolerances"] == {"bfloat16": {"rtol": 0.02, "atol": 0.02}, "float32": "tf32"}
    assert any("bf16 output rounding" in u for u in used)
    # explicit arguments win: per key for sizes and tolerances, whole for dtypes and cases
    args, used = sidecar.for_validation(side, dtypes=["float16"], cases=[{"name": "x", "sizes": {"dim": 3}}],
                                        tolerances={"float32": {"rtol": 1e-3, "atol": 1e-3}}, sizes={"dim": 8})
    assert args["dtypes"] == ["float16"] and args["cases"][0]["name"] == "x" and args["sizes"] == {"dim": 8}
    assert args["sizes_sidecar"] == {}  # the explicit size won: nothing the verdict line should blame the sidecar for
    assert args["tolerances"]["float32"] == {"rtol": 1e-3, "atol": 1e-3} and "bfloat16" in args["tolerances"]
    b, _ = sidecar.for_benchmark(side, dtype=None, cases=None, sizes=None)
    assert b["dtype"] == "float32" and b["sizes"] == {"dim": 64, "batch_size": 4096}
    assert b["bytes_expr"] == "2 * 4 * batch_size * dim" and b["tolerances"]["float32"] == "tf32"


@pytest.mark.parametrize("text, problem, message", [
    ("tolerance = 1", KB_PROBLEM, "unknown key 'tolerance' \\(did you mean 'tolerances'\\?\\)"),
    ("[tolerances.float32]\nrtol = 1e-3\natol = 1e-3\n", KB_PROBLEM, "needs a reason"),
    ("[tolerances.float32]\nrtol = 1e-3\natol = 1e-3\nreason = 'x'\n", KB_PROBLEM, "needs a reason"),
    ("[tolerances.float32]\nrtol = -1\natol = 1e-3\nreason = 'because the sum is long'\n", KB_PROBLEM, ">= 0"),
    ("[tolerances.float32]\npreset = 'tf64'\nreason = 'because the sum is long'\n", KB_PROBLEM, "preset 'tf64'"),
    ("[tolerances.flaot32]\nrtol = 1\natol = 1\nreason = 'because the sum is long'\n", KB_PROBLEM,
     "unknown dtype 'flaot32' \\(did you mean 'float32'\\?\\)"),
    ("dtypes = ['float33']", KB_PROBLEM, "reference.p2t.toml: dtypes: unknown dtype 'float33'"),
    ("dtypes = 'float32'", KB_PROBLEM, "non-empty list"),
    ("[sizes]\nbatchsize = 4\n", KB_PROBLEM, "no module-level integer 'batchsize' \\(did you mean 'batch_size'"),
    ("[sizes]\ndim = -1\n", KB_PROBLEM, "non-negative integer"),
    ("[sizes]\nn = 4\n", FN_PROBLEM, "size overrides work for a KernelBench reference"),
    ("[[cases]]\nname = 'a'\nshape = [4, 4]\n", KB_PROBLEM, "write sizes = "),
    ("[[cases]]\nname = 'a'\nsizes = { dim = 4 }\n", FN_PROBLEM, "this reference takes shape"),
    ("[[cases]]\nname = 'a'\nshape = [4, -1]\n", FN_PROBLEM, "non-negative integers"),
    ("[[cases]]\nname = 'a'\nshape = [4]\n[[cases]]\nname = 'a'\nshape = [5]\n", FN_PROBLEM, "repeated: a"),
    ("[[cases]]\nname = 'a'\nshap = [4]\n", FN_PROBLEM, "did you mean 'shape'"),
    ("[bench]\nflops = '2 * M * N'\n", KB_PROBLEM, "unknown name 'M'.*batch_size, dim"),
    ("[bench]\nbytes = '2 *'\n", KB_PROBLEM, "not a Python expression"),
    ("[bench]\nbytes = 'x.__class__'\n", KB_PROBLEM, "private attribute"),
    ("notes = [1]", KB_PROBLEM, "notes must be a string"),
    ("budget = -5", KB_PROBLEM, "budget must be the seconds"),
    ("budget = 'long'", KB_PROBLEM, "budget must be the seconds"),
    ("= broken", KB_PROBLEM, "not valid TOML"),
])
def test_bad_sidecars_are_refused_with_the_key(text: str, problem: sidecar.Problem, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        sidecar.parse(text, Path("reference.p2t.toml"), problem)


def test_the_budget_goes_to_validation_and_an_explicit_one_wins() -> None:
    side = sidecar.parse("budget = 300\n", Path("reference.p2t.toml"), KB_PROBLEM)
    args, used = sidecar.for_validation(side, dtypes=None, cases=None, tolerances=None, sizes=None)
    assert args["budget_s"] == 300.0 and "budget 300 s" in used
    args, _ = sidecar.for_validation(side, dtypes=None, cases=None, tolerances=None, sizes=None, budget_s=60)
    assert args["budget_s"] == 60


def test_formula_is_evaluated_over_the_modules_current_sizes() -> None:
    torch = pytest.importorskip("torch")
    from pytorch_to_triton.worker.benchmark import formulas

    mod = types.ModuleType("ref")
    mod.batch_size, mod.dim = 4, 300
    formulas.install(mod, {"bytes_expr": "2 * 4 * batch_size * dim", "flops_expr": "sum(numel(t) for t in inputs)"})
    x = torch.ones(3, 5)
    assert mod.BYTES(None, [x]) == 2 * 4 * 4 * 300 and mod.FLOPS(None, [x, x]) == 30
    mod.dim = 10  # a size override applied to the module after install is seen
    assert mod.BYTES(None, [x]) == 2 * 4 * 4 * 10
    from pytorch_to_triton.worker.validation.tasks import TaskError

    formulas.install(mod, {"flops_expr": "batch_size // (dim - 10)"})
    with pytest.raises(TaskError, match=r"\[bench\] flops = .* failed: ZeroDivisionError") as e:
        mod.FLOPS(None, [x])
    assert e.value.usage


def test_service_reads_the_sidecar_and_explicit_args_win(tmp_path: Path, tmp_service) -> None:
    shutil.copy(TASKS / "add_reference.py", tmp_path / "reference.py")
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "stage1.py")
    (tmp_path / "reference.p2t.toml").write_text(
        'notes = "x and y have the same length"\ndtypes = ["float16"]\n'
        "[[cases]]\nname = \"side_odd\"\nshape = [37]\n"
        "[tolerances.float16]\nrtol = 2e-3\natol = 2e-3\nreason = \"fp16 output rounding of the sum\"\n")
    rep = tmp_service.validate(reference="reference.py", candidates=["stage1.py"], trials=1)
    assert rep.ok, rep.summary
    cases = rep.candidates[0].cases
    assert {c.name for c in cases} >= {"small", "side_odd"} and {c.dtype for c in cases} == {"float16"}
    assert "task sidecar reference.p2t.toml: dtypes float16; 1 case(s) side_odd" in rep.summary
    assert rep.sidecar["file"] == "reference.p2t.toml" and rep.sidecar["notes"] == "x and y have the same length"
    assert "fp16 output rounding" in rep.summary
    rep2 = tmp_service.validate(reference="reference.py", candidates=["stage1.py"], trials=1, dtypes=["float32"],
                                cases=[{"name": "mine", "shape": [5]}])
    assert {c.dtype for c in rep2.candidates[0].cases} == {"float32"}
    assert "side_odd" not in {c.name for c in rep2.candidates[0].cases}
    audit = tmp_service.audit(path="stage1.py", compile=False)  # no reference given: the folder's task
    assert "task notes (reference.p2t.toml): x and y have the same length" in audit.summary
    assert "x and y have the same length" in audit.markdown  # the text an MCP client shows
    assert audit.task_notes == "x and y have the same length"
    (tmp_path / "reference.p2t.toml").write_text("dtypes = ['float33']\n")
    with pytest.raises(UsageError, match="reference.p2t.toml: dtypes: unknown dtype 'float33'"):
        tmp_service.validate(reference="reference.py", candidates=["stage1.py"], trials=1)


def test_the_documented_example_is_a_valid_sidecar() -> None:
    doc = (Path(__file__).resolve().parent.parent / "references" / "task-format.md").read_text()
    section = doc.split("## The task sidecar", 1)[1]
    example = section.split("```toml", 1)[1].split("```", 1)[0]
    softmax = sidecar.read_problem("batch_size = 16\ndim = 16384\nclass Model: ...\ndef get_inputs(): ...\n")
    side = sidecar.parse(example, Path("reference.p2t.toml"), softmax)
    assert side.tolerances == {"bfloat16": {"rtol": 2e-2, "atol": 2e-2}, "float32": "tf32"}
    assert side.bench["flops"] == "5 * batch_size * dim" and side.cases[0]["sizes"] == {"batch_size": 7, "dim": 1000}
