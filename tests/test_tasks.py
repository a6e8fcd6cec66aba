"""worker/validation/tasks.py: a user file's bare imports find its own folder's neighbours, whatever this worker
imported before from other folders."""

from __future__ import annotations

import sys
from pathlib import Path

from pytorch_to_triton.worker.validation.tasks import load_module


def _task(folder: Path, value: int) -> Path:
    folder.mkdir()
    (folder / "reference.py").write_text(f"def reference():\n    return {value}\n")
    cand = folder / "cand.py"
    cand.write_text("from reference import reference as _ref\n\n\ndef entry():\n    return _ref()\n")
    return cand


def test_a_bare_import_gets_the_files_own_folder_after_another_folders_same_name(tmp_path: Path) -> None:
    """The validation corpus's calls_reference cheat (`from reference import reference`) ran another task's reference
    when that task's folder stood ahead of its own on the worker's sys.path (CI 2026-12-07)."""
    a, b = _task(tmp_path / "a", 1), _task(tmp_path / "b", 2)
    try:
        assert load_module(a, "candidate").entry() == 1
        assert load_module(b, "candidate").entry() == 2
        assert load_module(a, "candidate").entry() == 1  # a's folder was on sys.path already, behind b's
        assert sys.modules["reference"].__file__ == str((tmp_path / "a" / "reference.py").resolve())
        assert "json" in sys.modules and "torch" in sys.modules  # only user folders' modules are ever forgotten
    finally:
        sys.modules.pop("reference", None)
        for d in ("a", "b"):
            p = str((tmp_path / d).resolve())
            if p in sys.path:
                sys.path.remove(p)
