"""The static pass follows the audited file's imports inside its package (issue 35, item 5; audit/imports.py).

Fixtures: tests/audit_import_fixtures/scalepkg (an entry importing its kernel from a sibling module, with a known
bug) and fairchem-core's fused_wigner.py, whose int32 edge offsets live in the kernels.py it imports (held_out_19).
"""

from __future__ import annotations

import ast
from pathlib import Path

from pytorch_to_triton.audit import audit_source
from pytorch_to_triton.audit.imports import MAX_FILES, follow, package_root, resolve

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "tests" / "audit_import_fixtures" / "scalepkg"
REL = "tests/audit_import_fixtures"


def _rel(p: Path) -> str:
    return str(p.resolve().relative_to(ROOT))


def _audit(path: Path):  # noqa: ANN202
    return audit_source(path.read_text(), _rel(path), path=path, root=ROOT, name_of=_rel)


def _line(path: Path, text: str) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s)


def test_a_kernel_imported_from_a_sibling_module_is_checked_on_its_own_file_and_line() -> None:
    kernels = PKG / "kernels.py"
    for entry in ("ops_rel.py", "ops_abs.py"):  # a relative import, and the package's own name
        rep = _audit(PKG / entry)
        unmasked = [f for f in rep.findings if f.id == "unmasked_access"]
        assert {(f.file, f.line, f.function) for f in unmasked} == {
            (f"{REL}/scalepkg/kernels.py", _line(kernels, "x = tl.load(x_ptr + offs)  # no mask"), "scale_kernel"),
            (f"{REL}/scalepkg/kernels.py", _line(kernels, "tl.store(y_ptr + offs, _times(x, s))"), "scale_kernel"),
        }, rep.findings
        # launched from the entry, so the kernel's suspects are not "launched outside this file" verify notes
        assert all(f.severity == "P0" for f in unmasked)
        # the kernel's lines are never put on the entry file, and a kernel it does not import is not read
        assert all(f.line <= len((PKG / entry).read_text().splitlines()) for f in rep.findings if f.file.endswith(entry))
        assert not any(f.function == "unused_kernel" or "unused_kernel" in f.evidence for f in rep.findings)
        names = {k["name"]: k.get("file") for k in rep.kernels}
        assert names == {"scale_kernel": f"{REL}/scalepkg/kernels.py", "_times": f"{REL}/scalepkg/kernels.py"}
        assert any(c.startswith(f"imported kernels read from {REL}/scalepkg/kernels.py") for c in rep.checked)


def test_the_good_twin_imported_under_an_alias_has_no_unmasked_access() -> None:
    rep = _audit(PKG / "ops_good.py")
    assert not [f for f in rep.findings if f.id == "unmasked_access"], rep.findings
    assert {k["name"] for k in rep.kernels} == {"scale_kernel", "_times"}  # scale_masked_kernel, named as imported


def test_without_a_path_nothing_is_followed() -> None:
    src = (PKG / "ops_rel.py").read_text()
    rep = audit_source(src, "ops_rel.py")
    assert rep.kernels == [] and not any(f.id == "unmasked_access" for f in rep.findings)


def test_fairchems_int32_edge_offsets_in_the_kernels_it_imports_are_reported_on_kernels_py() -> None:
    """held_out_19's miss: fused_wigner.py's static pass never read kernels.py (probe_labels.json `problems`)."""
    corpus = ROOT / "tests" / "audit_public_corpus" / "fairchem_core"
    rep = _audit(corpus / "fused_wigner.py")
    int32 = {(f.file, f.line) for f in rep.findings if f.id == "int32_offset_overflow"}
    kernels = "tests/audit_public_corpus/fairchem_core/kernels.py"
    assert (kernels, 1671) in int32  # rb = edge_id * RAD, the radial row of wigner_conv1_fused_fwd_kernel
    assert all(f.file == kernels for f in rep.findings if f.line > 645)  # fused_wigner.py has 645 lines
    atomics = {f.line for f in rep.findings if f.id == "atomic_order" and f.file == kernels}
    assert atomics == {1960, 1966, 2093}  # the backward's and the scatter's float atomics (labels.json)
    # only what fused_wigner.py imports (and their @jit helpers): not the permute kernels of the same file
    assert not any("permute" in (k["name"]) for k in rep.kernels)
    # launched through torch.library's wrap_triton(kernel)[grid](...), which counts as a launch of the kernel
    assert next(k for k in rep.kernels if k["name"] == "wigner_conv1_fused_fwd_kernel")["launched"]


def test_the_follow_stays_inside_the_package_and_its_bounds(tmp_path: Path) -> None:
    pkg = tmp_path / "top" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .k0 import k0\n")  # a re-export, followed one level more
    for i in range(MAX_FILES + 2):
        (pkg / f"k{i}.py").write_text("import triton\n\n@triton.jit\n"
                                      f"def k{i}(x_ptr):\n    x = 1\n")
    (tmp_path / "outside.py").write_text("import triton\n\n@triton.jit\ndef out_k(x):\n    pass\n")
    entry = pkg / "entry.py"
    imports = [f"from .k{i} import k{i}" for i in range(MAX_FILES + 2)]
    entry.write_text("\n".join(["from triton.language import core", "from ... import outside",
                                "from ...outside import out_k", "from top.pkg import k0 as again", *imports]) + "\n")
    root = package_root(entry, tmp_path)
    assert root == tmp_path / "top"
    tree = ast.parse(entry.read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert resolve(nodes[0], entry, root) is None  # an installed package (triton) is not the user's code
    assert resolve(nodes[2], entry, root) is None  # above the package root
    assert resolve(nodes[3], entry, root) == pkg / "__init__.py"  # the package by its own name
    got = follow(tree, entry, root, lambda p: p.name)
    assert "out_k" not in got.kernels and "again" in got.kernels  # k0 through pkg/__init__.py's re-export
    assert len(got.files) <= MAX_FILES and any("past" in n for n in got.notes)


def test_the_probes_confirm_the_imported_kernels_suspect_on_its_own_file(service) -> None:  # noqa: ANN001
    """The sizes probe fails inside kernels.py: the static suspect on that file's line becomes the P0 (evidence.py
    matches a failure to a finding of the failure's file), with a reproducer; the good twin has no P0."""
    rep = service.audit(path=f"{REL}/scalepkg/ops_abs.py", harness=f"{REL}/harness.py", compile=False)
    line = _line(PKG / "kernels.py", "x = tl.load(x_ptr + offs)  # no mask")
    hit = next(f for f in rep.findings if f.check == "unmasked_access" and f.line == line)
    assert (hit.severity, hit.file, hit.probe) == ("P0", f"{REL}/scalepkg/kernels.py", "sizes"), rep.markdown
    assert "confirmed by probe sizes" in hit.evidence and hit.reproducer.startswith("python -m ")
    good = service.audit(path=f"{REL}/scalepkg/ops_good.py", harness=f"{REL}/harness.py", compile=False)
    assert good.counts["P0"] == 0, good.markdown


def test_an_imported_module_that_does_not_parse_is_said_and_the_file_is_still_audited(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import triton\n\n@triton.jit\ndef k(x_ptr:\n")
    entry = tmp_path / "entry.py"
    entry.write_text("import torch\nfrom .broken import k\n\n\ndef f(x):\n    return x.sum().item()\n")
    rep = audit_source(entry.read_text(), "entry.py", path=entry, root=tmp_path)
    assert any(n.startswith("broken.py not read: SyntaxError") for n in rep.not_checked), rep.not_checked
    assert rep.kernels == []
