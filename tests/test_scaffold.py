"""`pytorch-to-triton new`: scaffolds from a KernelBench file and from model.py:Class, validated for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pythonpath

from pytorch_to_triton import scaffold, sidecar
from pytorch_to_triton.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "scaffold_fixtures"

# What an assistant writes into the scaffold: the example kernel made into relu * alpha, and the launch.
KB_KERNEL = ("def kb_scaled_relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
             "def kb_scaled_relu_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):")
KB_STORE = ("    tl.store(out_ptr + offsets, x, mask=mask)",
            "    tl.store(out_ptr + offsets, tl.where(x < 0, 0.0, x) * alpha, mask=mask)")  # NaN stays NaN
KB_LAUNCH = ("""        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        kb_scaled_relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, self.alpha, BLOCK_SIZE=1024)
        return out""")


def _fill(path: Path, launch: str, *pairs: tuple[str, str]) -> None:
    text = path.read_text()
    lines = [ln for ln in text.splitlines() if "raise NotImplementedError" in ln]
    assert len(lines) == 1, "the template has one forward stub to fill"
    text = text.replace(lines[0], launch)
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory):
    """A workspace with the fixtures copied in, and one warm Service for the module's validations."""
    from pytorch_to_triton.service import Service

    root = tmp_path_factory.mktemp("ws")
    shutil.copy(FIX / "kb_scaled_relu.py", root / "kb_scaled_relu.py")
    shutil.copytree(FIX / "mypkg", root / "src" / "mypkg")
    svc = Service(root)
    yield root, svc
    svc.close()


def test_kernelbench_scaffold_validates_through_the_service(ws) -> None:
    root, svc = ws
    original = (root / "kb_scaled_relu.py").read_bytes()
    res = scaffold.scaffold("kb_scaled_relu.py", "tasks/relu", root=root)
    folder = root / "tasks" / "relu"
    assert {p.name for p in res.written} == {"reference.py", "reference.p2t.toml", "stage1.py", "stage2.py",
                                            "stage3.py"}
    assert (folder / "reference.py").read_bytes() == original == (root / "kb_scaled_relu.py").read_bytes()
    assert res.sizes == {"batch_size": 4, "dim": 300}
    side_text = (folder / "reference.p2t.toml").read_text()
    assert "# batch_size = 4" in side_text and 'source = "kb_scaled_relu.py"' in side_text
    assert sidecar.load(folder / "reference.py").sizes == {}  # sizes written commented out: full size by default
    stage1 = (folder / "stage1.py").read_text()
    assert "def __init__(self, alpha: float):" in stage1 and "super().__init__()" in stage1
    assert "super(Model" not in stage1 and "def forward(self, x: torch.Tensor):" in stage1

    unfilled = svc.validate(reference="tasks/relu/reference.py", candidates=["tasks/relu/stage2.py"], trials=1)
    assert not unfilled.ok and "scaffold" in unfilled.summary

    _fill(folder / "stage1.py", KB_LAUNCH, KB_KERNEL, KB_STORE)
    rep = svc.validate(reference="tasks/relu/reference.py", candidates=["tasks/relu/stage1.py"], trials=1)
    assert rep.ok, rep.summary
    assert "task sidecar reference.p2t.toml" in rep.summary


def test_model_class_scaffold_imports_the_unchanged_model(ws) -> None:
    root, svc = ws
    before = {p.name: p.read_bytes() for p in (root / "src" / "mypkg").iterdir() if p.is_file()}
    res = scaffold.scaffold("src/mypkg/layers.py:Scale", "tasks/scale", root=root,
                            inputs="x=float32[batch=6,dim=40]; idx=int64[batch](0,9)", init="dim=dim")
    assert res.sizes == {"batch": 6, "dim": 40}
    folder = root / "tasks" / "scale"
    ref = (folder / "reference.py").read_text()
    assert "from mypkg.layers import Scale as Model" in ref and "batch = 6\ndim = 40\n" in ref
    assert "torch.randint(0, 9, (batch,), dtype=torch.int64)" in ref and "return [dim]" in ref
    assert "class ModelNew(Scale):" in (folder / "stage1.py").read_text()
    assert {p.name: p.read_bytes() for p in (root / "src" / "mypkg").iterdir() if p.is_file()} == before
    _fill(folder / "stage1.py", """        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        shift = (idx.to(x.dtype) * 0.5).contiguous()
        scale_kernel[(triton.cdiv(n, 256),)](x, self.w, shift, out, n, x.shape[-1], BLOCK_SIZE=256)
        return out""", ("def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
                        "def scale_kernel(x_ptr, w_ptr, s_ptr, out_ptr, n_elements, dim, BLOCK_SIZE: tl.constexpr):"),
          ("    tl.store(out_ptr + offsets, x, mask=mask)",
           "    w = tl.load(w_ptr + offsets % dim, mask=mask)\n    s = tl.load(s_ptr + offsets // dim, mask=mask)\n"
           "    tl.store(out_ptr + offsets, x * w + s, mask=mask)"))
    rep = svc.validate(reference="tasks/scale/reference.py", candidates=["tasks/scale/stage1.py"], trials=1)
    assert rep.ok, rep.summary
    # Another project's mypkg.layers.Scale (doubled output): the warm worker must import this one, not the first
    other = root / "other" / "mypkg"
    shutil.copytree(root / "src" / "mypkg", other)
    (other / "layers.py").write_text((other / "layers.py").read_text().replace("return x * self.w +",
                                                                             "return 2 * x * self.w +"))
    scaffold.scaffold("other/mypkg/layers.py:Scale", "tasks/scale2", root=root, init="dim=dim",
                      inputs="x=float32[batch=6,dim=40]; idx=int64[batch](0,9)")
    shutil.copy(folder / "stage1.py", root / "tasks" / "scale2" / "stage1.py")  # imports mypkg.layers the same way
    wrong = svc.validate(reference="tasks/scale2/reference.py", candidates=["tasks/scale2/stage1.py"], trials=1)
    assert not wrong.ok and "mismatch" in wrong.summary, wrong.summary
    again = svc.validate(reference="tasks/scale/reference.py", candidates=["tasks/scale/stage1.py"], trials=1)
    assert again.ok, again.summary
    from pytorch_to_triton import journal

    files = journal.read_entries(root, "tasks-scale")[-1]["files"]
    assert "src/mypkg/layers.py" in files  # the journal keys the result to the user's model file too


def test_refuses_to_overwrite_and_force_backs_up(tmp_path: Path) -> None:
    shutil.copy(FIX / "kb_scaled_relu.py", tmp_path / "p.py")
    scaffold.scaffold("p.py", root=tmp_path)
    stage1 = tmp_path / "p" / "stage1.py"
    stage1.write_text("# my work\n")
    with pytest.raises(UsageError, match=r"refusing to overwrite p/stage1.py.*--force"):
        scaffold.scaffold("p.py", root=tmp_path)
    assert stage1.read_text() == "# my work\n"
    again = scaffold.scaffold("p.py", root=tmp_path, force=True)
    assert [b.name for b in again.backups][0].startswith("stage1.py.bak-")
    assert (tmp_path / "p" / again.backups[0].name).read_text() == "# my work\n"
    assert {p.name for p in again.kept} >= {"reference.py", "stage2.py"}  # identical files are left alone


@pytest.mark.parametrize("source, kw, message", [
    ("nope.py", {}, "not found"),
    ("notkb.py", {}, "not a KernelBench problem"),
    ("m.py:Missing", {"inputs": "x=float32[4]"}, "no top-level class 'Missing'; it defines: M"),
    ("m.py:M", {}, "needs an input spec"),
    ("m.py:M", {"inputs": "x=float33[4]"}, "unknown dtype 'float33'"),
    ("m.py:M", {"inputs": "x=float32[n]"}, "size 'n' is used before it is defined"),
    ("m.py:M", {"inputs": "y=float32[4]"}, "missing x; not arguments of forward: y"),
    ("m.py:M", {"inputs": "x=float32[4]"}, "missing k"),
    ("m.py:M", {"inputs": "x=float32[4]", "init": "k=zz"}, "neither a Python literal nor a size"),
    ("m.py:M", {"inputs": "x=float32[4](0,3)", "init": "k=1"}, "needs an integer dtype"),
    ("m.py:M", {"inputs": "x float32"}, "not name=dtype"),
    ("m.py:1M", {}, "not a class name"),
    ("kb.py", {"inputs": "x=float32[4]"}, "are for a model.py:ClassName"),
    ("../outside.py", {}, "outside the workspace"),
])
def test_bad_specs_say_what_to_do(tmp_path: Path, source: str, kw: dict, message: str) -> None:
    (tmp_path / "notkb.py").write_text("def f():\n    return 1\n")
    (tmp_path / "m.py").write_text("import torch\nclass M(torch.nn.Module):\n    def __init__(self, k):\n"
                                   "        super().__init__()\n    def forward(self, x):\n        return x\n")
    shutil.copy(FIX / "kb_scaled_relu.py", tmp_path / "kb.py")
    with pytest.raises(UsageError, match=message):
        scaffold.scaffold(source, root=tmp_path, **kw)
    assert not any(p.name.startswith("stage") for p in tmp_path.rglob("*.py"))


def test_cli_new(tmp_path: Path) -> None:
    shutil.copy(FIX / "kb_scaled_relu.py", tmp_path / "kb.py")
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    cmd = [sys.executable, "-m", "pytorch_to_triton", "new", "kb.py", "--workspace", str(tmp_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "wrote kb/stage1.py" in out.stdout and "sizes: batch_size=4, dim=300" in out.stdout
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert again.returncode == 0 and "kept kb/stage1.py" in again.stdout  # same content: nothing to refuse
    (tmp_path / "kb" / "stage1.py").write_text("# edited\n")
    refused = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert refused.returncode == 2 and "refusing to overwrite kb/stage1.py" in refused.stderr


def test_mcp_prompt_scaffolds_and_never_overwrites(ws) -> None:
    import anyio
    from mcp import Client

    from pytorch_to_triton.mcp_server import build_server

    root, svc = ws

    async def go() -> tuple[str, str]:
        async with Client(build_server(svc)) as client:
            assert "new-task" in {p.name for p in (await client.list_prompts()).prompts}
            first = await client.get_prompt("new-task", {"source": "kb_scaled_relu.py", "dest": "tasks/p"})
            (root / "tasks" / "p" / "stage1.py").write_text("# work in progress\n")
            second = await client.get_prompt("new-task", {"source": "kb_scaled_relu.py", "dest": "tasks/p"})
            return first.messages[0].content.text, second.messages[0].content.text

    first, second = anyio.run(go)
    assert "wrote tasks/p/stage1.py" in first and "reference.p2t.toml" in first and "run_validation" in first
    assert "refusing to overwrite tasks/p/stage1.py" in second
    assert (root / "tasks" / "p" / "stage1.py").read_text() == "# work in progress\n"


def test_a_constructor_reading_module_globals_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(
        "import torch\nimport torch.nn as nn\nHIDDEN = 64\nbatch_size = 8\n\n"
        "class Model(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.fc = nn.Linear(d, HIDDEN)\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
        "def get_inputs():\n    return [torch.randn(batch_size, 16)]\n\ndef get_init_inputs():\n    return [16]\n")
    res = scaffold.scaffold("p.py", root=tmp_path)
    assert any("module-level HIDDEN" in n for n in res.notes) and res.sizes == {"HIDDEN": 64, "batch_size": 8}
    assert "reads the problem's module-level HIDDEN" in (tmp_path / "p" / "stage1.py").read_text()


def test_input_and_init_specs_parse() -> None:
    items, sizes = scaffold.parse_inputs("x=float32[batch=8, dim=1024]; idx=int64[batch](0,10); eps=1e-5; "
                                         "m=bool[8]; s=bf16[]")
    assert sizes == {"batch": 8, "dim": 1024}
    assert [(i.name, i.dtype, i.dims) for i in items] == [("x", "float32", ["batch", "dim"]),
                                                         ("idx", "int64", ["batch"]), ("eps", None, []),
                                                         ("m", "bool", ["8"]), ("s", "bfloat16", [])]
    assert items[2].value == 1e-5 and (items[1].low, items[1].high) == (0, 10)
    assert [scaffold._tensor_expr(i) for i in (items[0], items[1], items[3])] == [
        "torch.randn((batch, dim), dtype=torch.float32)", "torch.randint(0, 10, (batch,), dtype=torch.int64)",
        "torch.rand((8,)) < 0.5"]
    assert scaffold.parse_init("dim=dim, shape=(2, 3); act='gelu'", sizes) == {"dim": "dim", "shape": "(2, 3)",
                                                                              "act": "'gelu'"}
    with pytest.raises(UsageError, match="defined twice"):
        scaffold.parse_inputs("x=float32[n=4]; y=float32[n=5]")


def test_new_writes_files_with_the_users_umask(tmp_path: Path) -> None:
    """`new` wrote 0600 files (mkstemp's mode); a task folder is the user's, readable as their umask says."""
    shutil.copy(FIX / "kb_scaled_relu.py", tmp_path / "kb.py")
    old = os.umask(0o022)
    try:
        res = scaffold.scaffold("kb.py", root=tmp_path)
    finally:
        os.umask(old)
    assert res.written
    assert {p.name: p.stat().st_mode & 0o777 for p in res.written} == {p.name: 0o644 for p in res.written}


def test_the_suggested_odd_case_keeps_the_relations_among_the_sizes() -> None:
    """Issue 40: `batch_size = 7, max_seqlen = 7` was suggested for minGPT, whose seq_len (512) must stay <=
    max_seqlen. One size moves, to the largest odd value that keeps every order (and divisibility not involving the
    batch-like first size); none when no size can."""
    mingpt = {"batch_size": 128, "max_seqlen": 1024, "seq_len": 512, "n_embd": 768, "n_head": 8}
    assert scaffold.odd_case(mingpt) == {"batch_size": 127}
    assert scaffold.odd_case({"max_seqlen": 1024, "seq_len": 1024, "n_embd": 768, "n_head": 8}) == {}
    assert scaffold.odd_case({"batch_size": 16, "dim": 16384}) == {"batch_size": 15}
    text = scaffold.sidecar_text("x.py", mingpt)
    assert "# sizes = { batch_size = 127 }" in text and "max_seqlen = 7" not in text
    # issue 49: no empty `# sizes = { }` with a puzzling comment when no odd size fits: a case to fill in
    text = scaffold.sidecar_text("x.py", {"max_seqlen": 8, "seq_len": 8, "n": 4})
    assert "sizes = { }" not in text and '# sizes = { max_seqlen = ... }   # the sizes this case changes' in text


def test_the_sidecar_pins_the_interpreter_only() -> None:
    """Issue 48: `new` writes CPU-only pins as [sizes.interpreter] and its comment names that table; [sizes] (every
    run, the GPU's too) is offered commented out, saying the full size is then not run."""
    text = scaffold.sidecar_text("x.py", {"batch_size": 16, "dim": 16384})
    assert "\n[sizes.interpreter]\n# batch_size = 16\n# dim = 16384\n" in text
    assert "Sizes for Triton's CPU interpreter only" in text and "A GPU run keeps the problem's full size" in text
    assert "\n# [sizes]\n" in text and "\n[sizes]\n" not in text
    problem = sidecar.read_problem("batch_size = 16\ndim = 16384\ndef get_inputs(): pass\nclass Model: pass\n")
    side = sidecar.parse(text.replace("# batch_size = 16", "batch_size = 2"), Path("reference.p2t.toml"), problem)
    assert side.sizes == {} and side.sizes_interpreter == {"batch_size": 2}
