"""The calls_reference guard's watch (worker/confine/refwatch.py): sys.monitoring on Python >= 3.12, sys.setprofile
before. The same script runs in this interpreter and, when one is installed, under python3.12+ in a subprocess
(refwatch.py imports no torch, so a bare interpreter can run it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REFWATCH = Path(__file__).resolve().parent.parent / "server" / "pytorch_to_triton" / "worker" / "confine" / "refwatch.py"

SCRIPT = r'''
import importlib.util, sys, tempfile, threading
from pathlib import Path
spec = importlib.util.spec_from_file_location("refwatch_t", sys.argv[1])
rw = importlib.util.module_from_spec(spec); spec.loader.exec_module(rw)
tmp = Path(tempfile.mkdtemp())
(tmp / "ref_mod.py").write_text("def f(x):\n    return x + 1\n\ndef gen():\n    yield 1\n    yield 2\n")
(tmp / "other_mod.py").write_text("def g(x):\n    return x * 2\n\ndef calls(fn, x):\n    return fn(x)\n")
def load(name):
    s = importlib.util.spec_from_file_location(name, tmp / f"{name}.py")
    m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
ref, other = load("ref_mod"), load("other_mod")
ref_file = str(tmp / "ref_mod.py")
hits = []
for round_ in range(3):  # later rounds: spots disabled in round 0 must not hide the reference
    hits.clear()
    with rw.RefWatch(ref_file, lambda: hits.append(1)):
        other.g(3)
    assert not hits, ("a call outside the reference counted", round_)
    with rw.RefWatch(ref_file, lambda: hits.append(1)):
        other.calls(ref.f, 1)  # through another file's frame
    assert hits, ("a call of the reference was missed", round_)
ref.f(1)  # outside any watch: nothing recorded, nothing raised
n = len(hits)
assert len(hits) == n
with rw.RefWatch(ref_file, lambda: hits.append(1)):
    pass
assert len(hits) == n
# Another reference file: spots disabled against the first one come back.
with rw.RefWatch(str(tmp / "other_mod.py"), lambda: hits.append("other")):
    other.g(1)
assert "other" in hits, "the second reference file's function was missed"
print("monitoring" if rw.uses_monitoring() else "setprofile")
'''


def _run(python: str) -> str:
    done = subprocess.run([python, "-c", SCRIPT, str(REFWATCH)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_watch_in_this_python():
    mode = _run(sys.executable)
    assert mode == ("monitoring" if sys.version_info >= (3, 12) else "setprofile")


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_watch_under_sys_monitoring(version):
    found = [shutil.which(f"python{version}")] + sorted(map(str, Path.home().glob(f".pyenv/versions/{version}*/bin/"
                                                                                 f"python{version}")))
    exe = next((e for e in found if e and subprocess.run([e, "-c", "import sys"], capture_output=True).returncode
                == 0), None)
    if exe is None:
        pytest.skip(f"no python{version} here")
    assert _run(exe) == "monitoring"
