"""worker/validation/code_cache.py: unchanged user source is compiled once; every load still executes a fresh module."""

from __future__ import annotations

from pathlib import Path

from pytorch_to_triton.worker.validation.tasks import load_module


def test_unchanged_source_reuses_its_code_and_an_edit_is_compiled_again(tmp_path: Path) -> None:
    f = tmp_path / "cand.py"
    f.write_text("STATE = []\n\n\ndef entry(x):\n    STATE.append(x)\n    return x + 1\n")
    a, b = load_module(f, "candidate"), load_module(f, "candidate")
    assert a is not b and a.STATE is not b.STATE  # module-level state is never shared between loads
    assert a.entry.__code__ is b.entry.__code__  # compiled once
    a.entry(1)
    assert b.STATE == []
    f.write_text("STATE = []\n\n\ndef entry(x):\n    return x + 2\n")
    c = load_module(f, "candidate")
    assert c.entry(1) == 3 and c.entry.__code__ is not a.entry.__code__
