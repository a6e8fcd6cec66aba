"""The recorder's launch hook (runtime.launch_hook): launches that skip JITFunction.run are counted, others once."""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")
knobs = pytest.importorskip("triton.knobs")

from pytorch_to_triton.worker.device import runtime  # noqa: E402


class _Meta:
    def __init__(self, name: str):
        self.data = {"name": name}


def _hooks() -> list:
    chain = knobs.runtime.launch_enter_hook
    return list(getattr(chain, "calls", [chain] if chain else []))


def test_hook_set_only_inside_and_removed_after() -> None:
    before = _hooks()
    with runtime.launch_hook(True):
        assert runtime._hook_launch in _hooks()
    assert _hooks() == before
    with runtime.launch_hook(False):
        assert runtime._hook_launch not in _hooks()


def test_hook_counts_launches_outside_the_wrapped_run_only() -> None:
    rec = runtime.RECORDER
    rec.reset()
    depth = rec.depth
    try:
        rec.depth = 0
        runtime._hook_launch(_Meta("fast_kernel"))  # the compiled kernel's own launcher: counted here
        rec.depth = 1
        runtime._hook_launch(_Meta("jit_kernel"))  # inside JITFunction.run: the wrapper counted it
        assert (rec.count, rec.names) == (1, ["fast_kernel"])
        rec.depth = 0
        runtime._hook_launch(None)  # no metadata (hooks of older Triton): still a launch
        assert rec.count == 2 and rec.names[-1] == "kernel"
    finally:
        rec.depth = depth
        rec.reset()


def test_a_hook_set_turns_the_gallery_fast_launch_to_the_ordinary_path() -> None:
    """examples/*/stage3.py's _FastLaunch checks for a hook and then launches through Triton's recorded path."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "swiglu" / "stage3.py"
    spec = importlib.util.spec_from_file_location("swiglu_stage3_hooktest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert not mod._FastLaunch._hooked() or _hooks()
    with runtime.launch_hook(True):
        assert mod._FastLaunch._hooked()
