"""Hostile: fill the disk through the scratch directory, 1 MiB at a time (stopped by the file size limit; the test
sets P2T_SANDBOX_FILE_BYTES small so that this ends in a second)."""

import os
import tempfile

from good import reference as _kernel

with open(os.path.join(tempfile.gettempdir(), "fill.bin"), "wb") as f:
    for _ in range(64 << 10):  # up to 64 GiB
        f.write(b"\0" * (1 << 20))


def reference(x, y):
    return _kernel(x, y)
