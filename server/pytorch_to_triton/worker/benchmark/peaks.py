"""This device: its environment (GPU, driver, clocks), its measured peaks (copy, read, bf16 matmul) and the do_bench
call they come from, the roofline floor they set, and the flags of an implausible or host-bound timing."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

import torch

from ..device.runtime import Runtime
from . import roofline

ROOFLINE_MARGIN = 0.03  # a median this far below the roofline floor is implausible, not measurement noise


def _peak_flops(peaks: dict[str, Any], dtype: torch.dtype) -> float:
    """FLOP/s ceiling for a dtype: the measured bf16 matmul rate (x2 for 8-bit types, whose tensor cores run at
    twice the bf16 rate; fp32/tf32 run slower than bf16, so bf16 is a ceiling for them too)."""
    scale = 2.0 if torch.empty((), dtype=dtype).element_size() == 1 else 1.0
    return float(peaks["bf16_matmul_tflops"]) * 1e12 * scale


def roofline_floor_ms(work: roofline.Work, peaks: dict[str, Any], l2_bytes: float, cuda_graph: bool,
                      dtype: torch.dtype) -> tuple[float, str]:
    """The least time this GPU needs for the case's work at its measured peaks, and what bounds it.

    Bytes: the reads must come from HBM (do_bench flushes L2 before every call), at most at the measured read
    rate (never below the copy rate); writes can land in L2 and leave after the timer stops, so only writes past
    the L2 size count. Under CUDA graphs L2 is not flushed, so reads up to the L2 size may hit it and are not
    counted either. FLOPs: over the dtype's FLOP/s ceiling (_peak_flops)."""
    read_gbps = max(float(peaks.get("read_gbps") or 0.0), float(peaks["copy_gbps"]))
    reads = max(0.0, work.read_bytes - (l2_bytes if cuda_graph else 0.0))
    t_bytes = (reads + max(0.0, work.write_bytes - l2_bytes)) / read_gbps / 1e6
    t_flops = (work.flops or 0.0) / _peak_flops(peaks, dtype) * 1e3
    return (t_flops, "flops") if t_flops > t_bytes else (t_bytes, "bytes")


def plausibility_flags(median_ms: float, work: roofline.Work, peaks: dict[str, Any], l2_bytes: float,
                       cuda_graph: bool, dtype: torch.dtype) -> list[str]:
    """A suspect flag when the median beats this GPU's roofline floor by more than ROOFLINE_MARGIN."""
    floor, bound = roofline_floor_ms(work, peaks, l2_bytes, cuda_graph, dtype)
    if not median_ms or floor <= 0 or median_ms >= floor * (1 - ROOFLINE_MARGIN):
        return []
    if bound == "flops":
        what = (f"{work.flops:.3g} FLOPs ({work.flops_source}) at the measured "
                f"{_peak_flops(peaks, dtype) / 1e12:.0f} TFLOP/s")
        fix = "FLOPS" if work.flops_source == "declared" else "FLOPS (the count came from the reference's ops)"
    else:
        what = (f"{work.read_bytes / 1e6:.3g} MB read + {work.write_bytes / 1e6:.3g} MB written ({work.bytes_source}) "
                f"at the measured {max(float(peaks.get('read_gbps') or 0), float(peaks['copy_gbps'])):.0f} GB/s")
        fix = "BYTES" if work.bytes_source == "declared" else "BYTES (the count assumes every input is read once)"
    return [f"faster than the roofline: {median_ms:.4f} ms is below the {floor:.4f} ms this GPU needs for {what}; "
            "either work is skipped (cached or reused results, a shortcut for these inputs), data came from cache, "
            f"or the figure overstates the work: validate on this case (cases=[...]), read the code, check {fix}"]


def _sync() -> None:
    torch.cuda.synchronize()


def _nvidia_smi(fields: str) -> list[str]:
    dev = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0]
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", f"--id={dev}"],
                             capture_output=True, text=True, timeout=20, check=False)
        return [x.strip() for x in out.stdout.strip().splitlines()[0].split(",")] if out.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return []


def environment(rt: Runtime) -> dict[str, Any]:
    """GPU name, driver, clocks where readable, versions."""
    import triton

    env: dict[str, Any] = {"gpu": rt.gpu_name, "torch": torch.__version__, "triton": triton.__version__,
                           "cuda": torch.version.cuda, **{k: v for k, v in rt.info.items() if k != "python"},
                           "python": rt.info.get("python")}
    vals = _nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu")
    if len(vals) == 6:
        env.update(driver=vals[0], sm_clock_mhz=vals[1], max_sm_clock_mhz=vals[2], mem_clock_mhz=vals[3],
                   power_limit_w=vals[4], temperature_c=vals[5])
    return env


def _reset_l2_persistence() -> str:
    """Reset persisting-L2 lines so an earlier process's access policy cannot speed anything up."""
    import ctypes

    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            lib = ctypes.CDLL(name)
            rc = lib.cudaCtxResetPersistingL2Cache()
            return "reset" if rc == 0 else f"cudaCtxResetPersistingL2Cache returned {rc}"
        except OSError:
            continue
    try:
        import glob

        import nvidia  # type: ignore[import-not-found]

        for path in glob.glob(os.path.join(list(nvidia.__path__)[0], "**", "libcudart.so*"), recursive=True):
            lib = ctypes.CDLL(path)
            rc = lib.cudaCtxResetPersistingL2Cache()
            return "reset" if rc == 0 else f"cudaCtxResetPersistingL2Cache returned {rc}"
    except (ImportError, OSError, IndexError):
        pass
    return "not reset (libcudart not found)"


def _bench(fn: Callable[[], Any], warmup_ms: float, rep_ms: float, cuda_graph: bool) -> list[float]:
    """[median, p20, p80, min] in ms from one do_bench call."""
    import triton.testing as tt

    q = [0.5, 0.2, 0.8, 0.0]
    if cuda_graph and hasattr(tt, "do_bench_cudagraph"):
        with torch.cuda.stream(torch.cuda.Stream()):  # graph capture cannot run on the legacy default stream
            res = tt.do_bench_cudagraph(fn, rep=rep_ms, quantiles=q)
    else:
        res = tt.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=q)
    return [float(x) for x in (res if isinstance(res, (list, tuple)) else [res] * 4)]


def _host_ms_per_call(fn: Callable[[], Any], calls: int = 20, loops: int = 5) -> float:
    """Host time to issue one call (back-to-back, no sync in between): what the CPU side costs per call.

    The best of `loops` loops of `calls` calls: the CPU's own noise (other threads, frequency changes) only ever
    adds time, and a single loop right after timing read 2-3x the steady figure on the H200 host (2026-12-04)."""
    best = float("inf")
    for _ in range(max(1, loops)):
        _sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e3)
        _sync()
    return best


def _host_bound_flags(row: dict[str, Any], cuda_graph: bool) -> list[str]:
    """A GPU timing that contains host gaps: the host needs about as long per call as the GPU, or the
    distribution is bimodal (most runs far above the fastest)."""
    out = []
    med, host, lo, p20 = row.get("median_ms"), row.get("host_ms_per_call"), row.get("min_ms"), row.get("p20_ms")
    if cuda_graph or not med:
        return out
    if host and host > 0.7 * med:
        out.append(f"host-bound: issuing one call takes {host:.4f} ms on the CPU against {med:.4f} ms on the GPU, "
                   "so the timing includes host gaps; try cuda_graph=true, or less Python/fewer launches per call")
    elif lo and p20 and p20 > 1.5 * lo:
        out.append(f"bimodal timing: p20 {p20:.4f} ms vs min {lo:.4f} ms (host gaps, clocks or interference); "
                   "re-run, or try cuda_graph=true")
    return out


def measure_peaks(known: dict[str, Any], rt: Runtime, emit: Callable[..., None]) -> tuple[dict[str, Any], dict[str, Any]]:
    """This device's copy bandwidth and bf16 matmul rate: the host's entry for it in `known` (peaks_store.py), else
    measured now. Returns (peaks, {key: peaks} to keep when measured now, else {}): the host writes the file, the
    worker never does (its sandbox makes the workspace read-only)."""
    key = peaks_key(rt)
    if isinstance(known.get(key), dict) and "read_gbps" in known[key]:  # an entry without the read rate predates it
        return known[key], {}
    emit("progress", message="measuring this GPU's peaks once (device copy, read, bf16 8192^3 matmul)")
    n = 1 << 28  # 1 GiB of fp32 each way: far past L2, so this is HBM bandwidth
    x = torch.empty(n, device="cuda", dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    t_copy = _median_of(lambda: y.copy_(x), 5)
    y = None
    t_read = _median_of(lambda: x.sum(), 5)  # reads alone run faster than a copy: the floor for read-heavy kernels
    x = None  # free before the matmul; the lambda above is done with them
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_mm = _median_of(lambda: a @ b, 5)
    a = b = None
    torch.cuda.empty_cache()
    peaks = {"copy_gbps": 2 * n * 4 / t_copy / 1e6, "read_gbps": n * 4 / t_read / 1e6,
             "bf16_matmul_tflops": 2 * 8192**3 / t_mm / 1e9,
             "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "method": "best of 5 do_bench medians; copy "
             "counts read+write bytes; read: torch.sum of 1 GiB; matmul 2*8192^3 FLOPs", "gpu": rt.gpu_name}
    return peaks, {key: peaks}


def peaks_key(rt: Runtime) -> str:
    """The key of this device's peaks in the host's file: the GPU's name and the CUDA version."""
    return f"{rt.gpu_name}|{torch.version.cuda}"


def _median_of(fn: Callable[[], Any], k: int) -> float:
    """The best of k do_bench medians: a peak is what the device sustains at its best, and a transient
    neighbour (another process, clocks ramping up) must not lower the ceiling every % figure divides by."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    return min(_bench(fn, 50, 200, False)[0] for _ in range(k))
