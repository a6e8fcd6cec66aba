"""What the held-out pairs' checks share (benchmarks/held_out.py runs them; tests/audit_public_harnesses/checks/README.md
says how to add a pair): the Check record, the paths, and the corpus file loaded with its harness as the audit's probes
load them.

A check is a function that returns 1 while the labelled problem shows (a wrong result, a crash, an out-of-bounds access,
a run-to-run difference), 0 when it does not, 2 when it cannot run here (most need a GPU). It prints its evidence on
lines that start with its own name. Without CUDA the runner sets TRITON_INTERPRET=1 before the module is imported
(unless the check says interpret=False), and `pair` installs the audit worker's interpreter stand-ins.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "audit_public_corpus"
HARNESSES = ROOT / "tests" / "audit_public_harnesses"
CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"
if str(ROOT / "server") not in sys.path:
    sys.path.insert(0, str(ROOT / "server"))


@dataclass(frozen=True)
class Check:
    """One check of a pair: the function, what a run on the GPU gives when the label is right, its time limit."""

    run: Callable[[], int]
    expect: str
    limit_s: int = 150
    wrap: str = ""  # "memcheck": run under compute-sanitizer memcheck, PyTorch's caching allocator off (GPU only)
    env: dict[str, str] = field(default_factory=dict)  # extra environment of its process
    interpret: bool = True  # without CUDA: under Triton's interpreter (False: a check that compiles for sm_90 itself)


def load(path: Path, name: str) -> ModuleType:
    """Import a file under a module name (registered in sys.modules, as the probes do)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


SHIMS = ("libdevice", "cuda_noop")  # the stand-ins most corpus files need under the interpreter


def interpreter(shims: tuple[str, ...] = SHIMS) -> None:
    """Without CUDA, the audit worker's stand-ins: NumPy libdevice, torch.cuda.device as a no-op, the untimed autotuner
    (its first pruned config), Triton 3.9's compat fixes, list grids, bf16/TF32 dots that multiply values."""
    if CUDA:
        return
    from pytorch_to_triton.worker.device import interp_autotune, interp_compat, interp_libdevice, interp_tf32

    steps = {"libdevice": interp_libdevice.install, "cuda_noop": interp_compat.install_cuda_device_noop,
             "autotune": interp_autotune.install, "compat": interp_compat.install, "tf32": interp_tf32.install,
             "list_grid": interp_compat.install_list_grid}
    for name in shims:
        steps[name]()


def pair(project: str, name: str, shims: tuple[str, ...] = SHIMS) -> tuple[ModuleType, ModuleType]:
    """(harness, corpus module): the harness first, so that its stand-ins are in place when the file imports."""
    interpreter(shims)
    h = load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    return h, load(CORPUS / project / f"{name}.py", f"k_{project}_{name}")


def case(shape, dtype: torch.dtype = torch.float32, seed: int = 0):
    """A validation Case on this device, for a harness's make_inputs."""
    from pytorch_to_triton.worker.validation.tasks import Case

    return Case("check", shape, dtype, DEV, seed)


def max_err(out, ref) -> float:
    """The largest absolute difference over matching outputs (a tensor or a tuple of them)."""
    out, ref = (out,) if torch.is_tensor(out) else out, (ref,) if torch.is_tensor(ref) else ref
    return max((a.double() - b.double()).abs().max().item() for a, b in zip(out, ref))
