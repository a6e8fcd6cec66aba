"""Fault in the full-size dry run only: the candidate ends the process when its inputs are fake tensors (stands in
for a wrapper whose C extension dies on tensors without data), and is correct on real ones. Expected: the dry run's
crash is a note (the full-size checks not run), every case runs in a fresh worker and passes, one replacement."""

import os

from good import reference as _good


def reference(x, y):
    if type(x).__name__ == "FakeTensor":
        os._exit(5)
    return _good(x, y)
