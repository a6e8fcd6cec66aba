"""TF32 on the GPU against the interpreter's emulation (issues 18 and 29). About 30-60 s on an H200.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/gpu_tf32.py [--timing-only]

1. dot(A, I) with an exact identity returns fp32 operands as the tensor core saw them: the share of elements equal to
   truncation (what worker/device/interp_tf32.py emulates), cvt.rna, round-to-nearest-even, and the emulation.
2. What each precision costs (--timing-only: this alone): a 4096^3 fp32 matmul with tl.dot input_precision tf32 /
   tf32x3 / ieee, and torch.matmul with TF32 allowed or not: median ms, TFLOP/s, rel L2 error vs float64.
JSON to $OUT/gpu_tf32.json; exit 1 unless the emulation matched every element. The verdicts, GPU against
interpreter: `python -m pytest -m gpu tests/test_interp.py -k tf32`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

import numpy as np  # noqa: E402

from pytorch_to_triton.worker.device.interp_tf32 import tf32_round_rna, tf32_truncate  # noqa: E402

OUT = Path(os.environ.get("OUT") or "/tmp/out")


def _rne(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32)
    bias = ((bits >> np.uint32(13)) & np.uint32(1)) + np.uint32(0xFFF)
    return ((bits + bias) & np.uint32(0xFFFFE000)).view(np.float32)


def _emulated(a: np.ndarray, prec: str) -> np.ndarray:
    """What worker/device/interp_tf32.py computes for dot(a, I) in this precision (I exact: one product per output)."""
    if prec in ("default", "tf32"):
        return tf32_truncate(a)
    if prec == "tf32x3":
        big = tf32_round_rna(a)
        return (big + tf32_truncate((a - big).astype(np.float32))).astype(np.float32)
    return a


def rounding_probe() -> dict:
    """dot(A, I) on the GPU, for the default precision and each explicit one."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def eye_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr, PREC: tl.constexpr):
        r = tl.arange(0, N)
        a = tl.load(a_ptr + r[:, None] * N + r[None, :])
        b = tl.load(b_ptr + r[:, None] * N + r[None, :])
        if PREC == "default":
            c = tl.dot(a, b)
        else:
            c = tl.dot(a, b, input_precision=PREC)
        tl.store(c_ptr + r[:, None] * N + r[None, :], c)

    n = 64
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g) * torch.exp2(torch.randint(-20, 20, (n, n), generator=g).float())
    eye = torch.eye(n)
    out: dict = {}
    an = a.numpy()
    for prec in ("default", "tf32", "tf32x3", "ieee"):
        c = torch.empty(n, n, device="cuda")
        eye_dot[(1,)](a.cuda(), eye.cuda(), c, N=n, PREC=prec)
        cn = c.cpu().numpy()
        out[prec] = {name: float(np.mean(cn == f(an))) for name, f in
                     (("truncate", tf32_truncate), ("rna", tf32_round_rna), ("rne", _rne), ("exact", lambda x: x))}
        out[prec]["emulated"] = float(np.mean(cn == _emulated(an, prec)))
    return out


def timing_probe() -> dict:
    """ms, TFLOP/s and rel L2 error of a 4096^3 fp32 matmul per tl.dot input_precision, and torch's own."""
    import torch
    import triton
    import triton.language as tl
    from triton.testing import do_bench

    @triton.jit
    def mm_prec(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                PREC: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
            b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(a, b, acc, input_precision=PREC)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    n = 4096
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    ref = (a.double() @ b.double())
    a, b = a.cuda(), b.cuda()
    c = torch.empty(n, n, device="cuda")
    flops = 2.0 * n ** 3
    out: dict = {"shape": [n, n, n], "tile": [128, 128, 32]}

    def rel(x: torch.Tensor) -> float:
        return float((x.double().cpu() - ref).norm() / ref.norm())

    for prec in ("tf32", "tf32x3", "ieee"):
        def run(prec: str = prec) -> None:
            mm_prec[(n // 128, n // 128)](a, b, c, n, n, n, BM=128, BN=128, BK=32, PREC=prec, num_warps=8,
                                          num_stages=3)
        run()
        ms = do_bench(run, warmup=25, rep=200)
        out[f"triton_{prec}"] = {"ms": ms, "tflops": flops / ms / 1e9, "rel_l2": rel(c)}
    for allow in (True, False):
        torch.backends.cuda.matmul.allow_tf32 = allow
        ms = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=200)
        out[f"torch_matmul_allow_tf32_{allow}"] = {"ms": ms, "tflops": flops / ms / 1e9,
                                                   "rel_l2": rel(torch.matmul(a, b))}
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    timing = timing_probe()
    print(f"{'4096^3 fp32 matmul':<34}{'ms':>9}{'TFLOP/s':>10}{'rel L2':>11}")
    for k, v in timing.items():
        if isinstance(v, dict):
            print(f"{k:<34}{v['ms']:>9.3f}{v['tflops']:>10.1f}{v['rel_l2']:>11.2e}")
    if "--timing-only" in sys.argv:
        (OUT / "gpu_tf32_timing.json").write_text(json.dumps(timing, indent=2))
        return 0
    result: dict = {"rounding": rounding_probe(), "timing": timing}
    (OUT / "gpu_tf32.json").write_text(json.dumps(result, indent=2, default=str))
    print("rounding of fp32 operands by tl.dot (fraction of 4096 elements equal to each rounding)")
    print(f"{'precision':<10}{'truncate':>10}{'rna':>8}{'rne':>8}{'exact':>8}{'emulated':>10}")
    for prec, row in result["rounding"].items():
        print(f"{prec:<10}" + "".join(f"{row[k]:>{w}.3f}" for k, w in (("truncate", 10), ("rna", 8), ("rne", 8),
                                                                         ("exact", 8), ("emulated", 10))))
    ok = all(row["emulated"] == 1.0 for row in result["rounding"].values())
    print(f"\nthe emulation matches the GPU on every element: {ok}; JSON: {OUT / 'gpu_tf32.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
