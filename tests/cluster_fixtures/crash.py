"""BAD (kills its process): exits the worker mid-call; a crash is the kernel's verdict, not a Dask retry."""

import os


def reference(x, y):
    os._exit(3)
