"""float32 -> float8e4nv on 16 values: the GPU's Triton, torch (clamped to +-448) and the patched interpreter
(worker/device/interp_compat.install_fp8_rounding), issue 35. `python fp8_e4nv_cast.py` runs the kernel on CUDA when there is
one, else under the interpreter; `--interp` forces the interpreter. Prints the values and "MATCH"/"DIFFER" per mode."""

from __future__ import annotations

import os
import sys

if "--interp" in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

VALUES = [0.4914, 500., 0.0, -0.4914, 1.0, 0.9999, 447., 449., 464., 1e6, -1e6, 0.001, 2 ** -10, -3.3, 240., 15.5]


@triton.jit
def cast16(x_ptr, o_ptr):
    offs = tl.arange(0, 16)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to(tl.float8e4nv))


def main() -> int:
    interp = os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available()
    if interp:
        os.environ["TRITON_INTERPRET"] = "1"
        from pytorch_to_triton.worker.device import interp_compat

        print("patch:", interp_compat.install_fp8_rounding())
    dev = "cpu" if interp else "cuda"
    x = torch.tensor(VALUES, device=dev)
    o = torch.empty(16, dtype=torch.float8_e4m3fn, device=dev)
    cast16[(1,)](x, o)
    want = x.cpu().clamp(-448, 448).to(torch.float8_e4m3fn)
    same = torch.equal(o.cpu().view(torch.uint8), want.view(torch.uint8))
    print(f"{'interpreter' if interp else 'gpu'} triton {triton.__version__}: {o.cpu().float().tolist()}")
    print(f"torch clamped:          {want.float().tolist()}")
    print(f"{'interpreter' if interp else 'gpu'} vs torch clamped: {'MATCH' if same else 'DIFFER'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
