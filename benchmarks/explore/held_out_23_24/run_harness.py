"""Run one held-out harness's example call by hand (NOT the audit): the corpus file's ENTRY on make_inputs(case), and
its reference, under the interpreter; prints the largest error per output. Used while writing held_out_23/24.

    TRITON_INTERPRET=1 PYTHONPATH=$PWD/server python benchmarks/explore/held_out_23_24/run_harness.py CORPUS HARNESS
"""

import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402

from pytorch_to_triton.worker.device import interp_autotune, interp_compat, interp_libdevice  # noqa: E402
from pytorch_to_triton.worker.validation.tasks import Case  # noqa: E402


def install_interpreter_compat() -> None:
    """What the worker installs under the interpreter: list grids, torch.cuda.device as a no-op, libdevice, autotune."""
    for mod in (interp_compat, interp_libdevice, interp_autotune):
        mod.install()
    interp_compat.install_list_grid()
    interp_compat.install_cuda_device_noop()


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    install_interpreter_compat()
    target, harness = sys.argv[1], sys.argv[2]
    shape = eval(sys.argv[3]) if len(sys.argv) > 3 else None
    sys.path[:0] = [str(Path(target).parent), str(Path(harness).parent)]
    h = load(harness, "harness_under_test")
    t = load(target, "target_under_test")
    case = Case("example", shape or getattr(h, "AUDIT_SHAPE", None), torch.float32, "cpu", 0)
    args = h.make_inputs(case)
    t0 = time.monotonic()
    out = getattr(t, h.ENTRY)(*args)
    dt = time.monotonic() - t0
    ref = h.reference(*args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    for i, (o, r) in enumerate(zip(outs, refs)):
        o, r = o.detach(), r.detach()
        d = (o.double() - r.double()).abs()
        print(f"output {i}: {tuple(o.shape)} {o.dtype} max err {d.max().item():.3g} "
              f"(ref max {r.double().abs().max().item():.3g}) nonfinite {(~torch.isfinite(o.double())).sum().item()}")
    print(f"entry took {dt:.1f}s")


if __name__ == "__main__":
    main()
