"""Hangs on one case only: correct on small and edge_empty, then sleeps on odd_7 (7 elements) past any test
timeout. Expected on a timeout: the finished cases are kept, the report names `odd_7` as running (candidate
side) and since when."""

import time

from good import reference as _good


def reference(x, y):
    if x.numel() == 7:
        time.sleep(600)
    return _good(x, y)
