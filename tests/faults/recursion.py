"""Fault: unbounded recursion in user code (Python raises RecursionError; the worker stays up)."""


def _depth(n):
    return _depth(n + 1) + 1


def reference(x, y):
    return x + y + _depth(0)
