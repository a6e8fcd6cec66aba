"""Fault: a fork bomb, bounded so a broken limit cannot take the machine down (at most 2**9 processes)."""

import os
import time


def reference(x, y):
    for _ in range(9):
        try:
            os.fork()  # parent and child both go on forking
        except OSError:
            break
    time.sleep(120)
    os._exit(0)
