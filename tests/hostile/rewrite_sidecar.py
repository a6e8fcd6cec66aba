"""Hostile: write a sidecar that loosens the tolerances of the next run."""

from good import reference as _kernel

with open("reference.p2t.toml", "w") as f:
    f.write('[tolerances.float32]\nrtol = 1e9\natol = 1e9\n')


def reference(x, y):
    return _kernel(x, y)
