"""worker/confine/refseal.py: the reference module sealed before the candidate runs; every way of changing its code in
memory is found and put back (the end-to-end case is tests/hostile/patch_reference.py in tests/test_sandbox.py)."""

from __future__ import annotations

import types

from pytorch_to_triton.worker.confine import refseal

REFERENCE = '''
import math

SCALE = 2

def helper(x):
    return x * SCALE

def make_closure():
    k = 3
    def inner(x):
        return x + k
    return inner

closure = make_closure()

def reference(x, y=1):
    return helper(x) + y

class Model:
    def forward(self, x):
        return x + 1
'''


def _module() -> types.ModuleType:
    mod = types.ModuleType("p2t_ref_reference_0123456789")
    exec(compile(REFERENCE, "reference.py", "exec"), vars(mod))
    return mod


def test_untouched_reference_reports_nothing() -> None:
    mod = _module()
    refseal.seal(mod)
    assert mod.reference(1) == 3
    mod.SCALE = 5  # a plain value (KernelBench's size constants are overridden by the harness itself): not sealed
    assert refseal.check_and_restore() == []
    refseal.forget()


def test_every_kind_of_patch_is_found_and_restored() -> None:
    mod = _module()
    refseal.seal(mod)
    original_ref, original_helper = mod.reference, mod.helper
    mod.reference.__code__ = (lambda x, y=1: x * 0).__code__  # code swap
    mod.reference.__defaults__ = (100,)  # defaults
    mod.helper = lambda x: 0  # rebinding a name
    mod.closure.__closure__[0].cell_contents = 0  # closure cell
    mod.Model.forward = lambda self, x: x * 0  # a class's method
    mod.math = types.SimpleNamespace()  # a module the reference uses
    changed = refseal.check_and_restore()
    assert set(changed) == {"reference_0123456789.reference.__code__/defaults/closure",
                            "reference_0123456789.helper", "reference_0123456789.closure.__code__/defaults/closure",
                            "reference_0123456789.Model.forward", "reference_0123456789.math"}, changed
    assert mod.reference is original_ref and mod.helper is original_helper
    assert mod.reference(1) == 3 and mod.closure(1) == 4 and mod.Model().forward(1) == 2
    assert refseal.check_and_restore() == []  # restored: the next check is clean
    refseal.forget()
    assert refseal.check_and_restore() == []
