"""Why a confined worker sees no GPU: confine as the worker does, then initialise CUDA and print what fails."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
os.environ["P2T_SANDBOX"] = "1"
from pytorch_to_triton.worker import sandbox  # noqa: E402

print("confine:", sandbox.confine(os.getcwd()).summary, flush=True)
try:
    import torch

    print("cuda available:", torch.cuda.is_available(), "count:", torch.cuda.device_count(), flush=True)
    torch.zeros(1).cuda()
    print("cuda tensor ok", flush=True)
except Exception:  # noqa: BLE001
    traceback.print_exc()
for p in ["/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/proc/driver/nvidia/version", "/usr/local/nvidia/lib64",
          "/sys/bus/pci/devices"]:
    try:
        os.listdir(p) if os.path.isdir(p) else open(p, "rb").close()
        print("ok  ", p)
    except OSError as e:
        print("FAIL", p, e)
