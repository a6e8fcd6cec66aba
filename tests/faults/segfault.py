"""Fault: a segmentation fault in host code (reads address 0)."""

import ctypes


def reference(x, y):
    ctypes.string_at(0)
    return x + y
