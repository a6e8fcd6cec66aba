"""worker/validation/kernel_reuse.py: a re-import of an unchanged file keeps its autotune choices (and, on a GPU, its compiled
kernels); a changed file starts afresh. Runs the real loader under Triton's interpreter in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import pythonpath

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "kernel_reuse_fixtures" / "autotuned.py"

SCRIPT = r"""
import json, os, sys, time
from pathlib import Path
import torch
from pytorch_to_triton.worker.validation.tasks import load_module
path = Path(sys.argv[1])
out = {}
calls = []
def tuned(mod):
    return dict(mod.scale_kernel.cache)
m1 = load_module(path, "cand")
x = torch.randn(300)
assert torch.equal(m1.scale(x), x * 2)
out["first"] = len(tuned(m1))
benched = int(os.environ["P2T_TEST_BENCH_CALLS"])
m2 = load_module(path, "cand")
out["adopted"] = len(tuned(m2))
assert torch.equal(m2.scale(x), x * 2)  # the adopted choice still runs right
out["benchmarked_again"] = int(os.environ["P2T_TEST_BENCH_CALLS"]) - benched
path.write_text(path.read_text() + "\n# edited\n")
m3 = load_module(path, "cand")
out["after_edit"] = len(tuned(m3))
print(json.dumps(out))
"""


def test_unchanged_file_adopts_autotune_choices_changed_file_does_not(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    shutil.copy(FIXTURE, task / "autotuned.py")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": pythonpath(),
           "TRITON_CACHE_DIR": str(tmp_path / "tcache")}
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(task / "autotuned.py")], capture_output=True, text=True,
                         env=env, timeout=240, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"first": 1, "adopted": 1, "benchmarked_again": 0, "after_edit": 0}, out


def test_reuse_can_be_turned_off(tmp_path: Path, monkeypatch) -> None:
    import types

    from pytorch_to_triton.worker.validation import kernel_reuse

    f = tmp_path / "k.py"
    f.write_text("x = 1\n")
    monkeypatch.setenv("P2T_REUSE_KERNELS", "0")
    assert kernel_reuse.adopt(types.ModuleType("k"), f) == 0 and str(f) not in kernel_reuse._STATE
