"""Fault: a C-level stack overflow: the recursion limit lifted, then recursion through C code (json)."""

import json
import sys


def reference(x, y):
    sys.setrecursionlimit(10**7)
    nested = []
    for _ in range(10**6):
        nested = [nested]
    json.dumps(nested)  # the C encoder recurses once per level, far past the 8 MiB thread stack
    return x + y
