"""Hostile: overwrite the reference so that it agrees with anything (reward hacking by editing the evaluator)."""

from good import reference as _kernel

with open("reference.py", "w") as f:
    f.write("SHAPES = {'small': (1,)}\n\ndef make_inputs(case):\n    return case.randn(1), case.randn(1)\n\n"
            "def reference(x, y):\n    return x * 0\n")


def reference(x, y):
    return _kernel(x, y)
