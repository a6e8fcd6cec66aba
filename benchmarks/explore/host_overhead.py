"""Where a gallery wrapper's host time goes (issue 20).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/host_overhead.py

Host time per call = wall time of 200 back-to-back calls between two syncs, divided by 200 (best of 3 such
loops: the CPU's own noise is one-sided). Each row is one piece of what a wrapper does per call, from a bare Python
call up to Triton's three ways of launching the same compiled kernel: JITFunction.__getitem__ (binder +
specialization + cache lookup), CompiledKernel.__getitem__ (the launcher, no specialization) and the launcher
itself. Then the gallery's rmsnorm stage 3, Liger's and torch.compile's at 8192x8192 bf16 under no_grad.
Prints a table; writes $OUT/host_overhead.json.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")


def host_us(fn, calls: int = 200) -> float:
    best = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return round(best, 2)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _no_grad_block() -> None:
    with torch.no_grad():
        pass


def host_rows() -> dict[str, float]:
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024), 1, 1)  # CompiledKernel wants all three dims
    compiled = scale_kernel[grid](x, y, n, BLOCK=1024)
    stream = torch.cuda.current_stream().cuda_stream
    runner = compiled[grid]
    rows = {
        "python call": host_us(lambda: None),
        "torch.empty 8192x8192 bf16": host_us(lambda: torch.empty((8192, 8192), dtype=torch.bfloat16, device="cuda")),
        "torch.empty_like": host_us(lambda: torch.empty_like(x)),
        "x.reshape(-1, N)": host_us(lambda: x.reshape(-1, 1024)),
        "with torch.no_grad()": host_us(_no_grad_block),
        "torch.cuda.current_stream()": host_us(lambda: torch.cuda.current_stream()),
        "JITFunction[grid](...)": host_us(lambda: scale_kernel[grid](x, y, n, BLOCK=1024)),
        "CompiledKernel[grid](...)": host_us(lambda: compiled[grid](x, y, n, 1024)),
        "runner(...) (grid bound once)": host_us(lambda: runner(x, y, n, 1024)),
        "launcher run(...) raw": host_us(lambda: compiled.run(grid[0], 1, 1, stream, compiled.function,
                                                               compiled.packed_metadata, None, None, None,
                                                               x, y, n, 1024)),
    }
    ok = torch.equal(y, x * 2)
    rows["(raw launches correct)"] = float(ok)
    return rows


def wrapper_rows() -> dict[str, float]:
    rms = _load(ROOT / "examples" / "rmsnorm" / "stage3.py", "rms3").rms_norm
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(8192, device="cuda", dtype=torch.bfloat16)
    out: dict[str, float] = {}
    with torch.no_grad():
        rms(x, w)
        out["gallery rmsnorm stage3 (no_grad)"] = host_us(lambda: rms(x, w))
        try:
            import liger_kernel.transformers.functional as LF  # noqa: N812
            LF.liger_rms_norm(x, w, 1e-6, in_place=False)
            out["liger rms_norm (no_grad)"] = host_us(lambda: LF.liger_rms_norm(x, w, 1e-6, in_place=False))
        except Exception as e:  # noqa: BLE001
            out[f"liger: {type(e).__name__}"] = -1
        def t(x, w):
            xf = x.float()
            return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)
        c = torch.compile(t)
        c(x, w)
        out["torch.compile rmsnorm (no_grad)"] = host_us(lambda: c(x, w))
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    res = {"environment": env, "host_us": host_rows()}
    res["host_us"].update(wrapper_rows())
    (OUT / "host_overhead.json").write_text(json.dumps(res, indent=2))
    print(env)
    for k, v in res["host_us"].items():
        print(f"{k:45s} {v:8.2f} us")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("host_overhead.py measures GPU launches: no CUDA device here")
    main()
