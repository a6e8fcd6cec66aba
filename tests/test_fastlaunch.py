"""The gallery's `_FastLaunch` (pasted in every stage 3 so each example stands alone): one reviewed text, the
ordinary launch under the interpreter, and on a GPU a cached launch that never reuses a kernel compiled for another
argument class (alignment, int == 1 / % 16, dtype)."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _class_source(path: Path, name: str = "_FastLaunch") -> str | None:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return ast.get_source_segment(path.read_text(), node)
    return None


def _users() -> dict[str, str]:
    out = {}
    for p in sorted(EXAMPLES.glob("*/stage3.py")):
        src = _class_source(p)
        if src is not None:
            out[p.parent.name] = src
    return out


def test_every_copy_is_the_same_text():
    users = _users()
    # the memory-bound gallery ops launch through it (issue 20: host time per call)
    for op in ("rmsnorm", "layernorm", "softmax", "swiglu", "geglu", "rope", "logsumexp", "prefix_scan",
               "cross_entropy"):
        assert op in users, f"examples/{op}/stage3.py no longer defines _FastLaunch"
    first_op, first = next(iter(users.items()))
    for op, src in users.items():
        assert src == first, f"examples/{op}/stage3.py's _FastLaunch differs from examples/{first_op}/stage3.py's"


def _load(op: str):
    spec = importlib.util.spec_from_file_location(f"fl_{op}", EXAMPLES / op / "stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_interpreter_takes_the_ordinary_launch():
    # A process of its own: TRITON_INTERPRET is read when triton.jit decorates, so it cannot be flipped in this one.
    code = (
        "import importlib.util, torch, triton, triton.language as tl\n"
        f"spec = importlib.util.spec_from_file_location('sw3', r'{EXAMPLES / 'swiglu' / 'stage3.py'}')\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "@triton.jit\n"
        "def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)\n"
        "fl = mod._FastLaunch(twice)\n"
        "assert fl.ok is False\n"
        "x = torch.randn(37); y = torch.empty_like(x)\n"
        "for _ in range(2):\n"
        "    fl('k', (3,), x, y, 37, BLOCK=16)\n"
        "torch.testing.assert_close(y, 2 * x)\n"
        "assert not fl.cache\n"
        "print('ok')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_spec_separates_argument_classes():
    import torch

    mod = _load("swiglu")
    spec = mod._FastLaunch._spec
    x = torch.zeros(64)
    assert spec((x, 16)) != spec((x[1:], 16)), "a misaligned view must not share the aligned kernel"
    assert spec((x, 16)) != spec((x, 17)), "ints divisible by 16 are specialized"
    assert spec((x, 1)) != spec((x, 3)), "ints equal to 1 are specialized"
    assert spec((x, 16)) != spec((x.double(), 16)), "dtype is part of the key"
    assert spec((x, 32)) == spec((x, 48))


@pytest.mark.gpu
def test_cached_launch_matches_the_ordinary_one_across_classes():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)

    mod = _load("swiglu")
    fl = mod._FastLaunch(scale_kernel)
    base = torch.randn(4099, device="cuda")
    for n, off in ((4096, 0), (4096, 0), (4095, 1), (4095, 1), (1, 3), (4096, 1), (4096, 0)):
        x = base[off:off + n]
        y = torch.full_like(x, float("nan"))
        fl("scale", (triton.cdiv(n, 256),), x, y, n, 2.5, BLOCK=256)
        torch.testing.assert_close(y, x * 2.5)
    assert fl.ok and len(fl.cache) >= 3, "the cached path never compiled a key"
    assert fl.hits >= 3, "the cached path never launched (Triton 3.6's empty HookChain once disabled it)"
    # A registered launch hook (a profiler's) sees every launch: the cached path steps aside.
    seen = []
    with _launch_hook(lambda *a, **k: seen.append(1)):
        fl("scale", (16,), base[:4096], torch.empty(4096, device="cuda"), 4096, 2.5, BLOCK=256)
    assert seen, "a launch hook missed a launch"


def _launch_hook(hook):
    import contextlib

    import triton

    rt = triton.knobs.runtime

    @contextlib.contextmanager
    def ctx():
        chain = rt.launch_enter_hook
        if hasattr(chain, "add"):  # Triton >= 3.5: a HookChain
            chain.add(hook)
            try:
                yield
            finally:
                chain.remove(hook)
        else:
            rt.launch_enter_hook = hook
            try:
                yield
            finally:
                rt.launch_enter_hook = chain
    return ctx()


def test_hooked_reads_an_empty_hook_chain_as_no_hook():
    pytest.importorskip("triton.knobs")
    mod = _load("swiglu")
    assert mod._FastLaunch._hooked() is False, "no hook registered, yet the cached path would step aside"
    with _launch_hook(lambda *a, **k: None):
        assert mod._FastLaunch._hooked() is True
    assert mod._FastLaunch._hooked() is False
