"""Fault: user code ends the process with os._exit."""

import os


def reference(x, y):
    os._exit(3)
