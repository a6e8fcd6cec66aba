"""The known problems and robustness notes of the held_out_27 (comfy-kitchen 0.2.40) and held_out_28 (amd-quark 0.13,
adasplash 0.2.2) batches, one subcommand each, run on the corpus copies (tests/audit_public_corpus/...) with the
callers' inputs built by the batches' harnesses (tests/audit_public_harnesses/...).

Each subcommand exits 1 while the problem shows (wrong result, crash), 0 when it does not, 2 when it cannot run here
(it needs a GPU). Without CUDA the kernels run under Triton's interpreter (TRITON_INTERPRET=1 is set here then, with
the audit worker's NumPy libdevice and its no-op torch.cuda.device).

  python benchmarks/held_out.py 27_28 rms_rope_grid    # comfy rms_rope: > 65535 tokens on grid axis 2 (P0; GPU)
  python benchmarks/held_out.py 27_28 entmax_interp    # adasplash triton_entmax: TRITON_INTERPRET=1 crash (P0)
  python benchmarks/held_out.py 27_28 mx_bf16          # quark mx: bf16 qdq (wrong under the CPU interpreter)
  python benchmarks/held_out.py 27_28 mx_ragged        # quark mx: in_features not a multiple of 32 (GPU)
  python benchmarks/held_out.py 27_28 entmax_autotune  # adasplash: a 30-config autotune per row length (GPU)
  python benchmarks/held_out.py 27_28 adaln_mean       # comfy adaln: one-pass variance (robustness note)
  python benchmarks/held_out.py 27_28 e5m3_nan         # quark e5m3: NaN comes back finite (robustness note)
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import torch
from _common import CORPUS, CUDA, DEV, HARNESSES, ROOT, Check


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _pair(project: str, name: str):
    """(harness, corpus module): the harness first, so that its stand-ins are in place when the file imports."""
    if not CUDA:  # as the audit's worker does under the interpreter
        sys.path.insert(0, str(ROOT / "server"))
        from pytorch_to_triton.worker.device import interp_compat, interp_libdevice
        interp_libdevice.install()
        interp_compat.install_cuda_device_noop()
    h = _load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    return h, _load(CORPUS / project / f"{name}.py", f"k_{project}_{name}")


def _case(shape, dtype, seed=0):
    sys.path.insert(0, str(ROOT / "server"))
    from pytorch_to_triton.worker.validation.tasks import Case
    return Case("explore", shape, dtype, DEV, seed)


def _max_err(out, ref) -> float:
    out, ref = (out,) if torch.is_tensor(out) else out, (ref,) if torch.is_tensor(ref) else ref
    return max((a.double() - b.double()).abs().max().item() for a, b in zip(out, ref))


def rms_rope_grid() -> int:
    """rms_rope launches grid (batch, heads, tokens): tokens ride on grid axis 2, which CUDA caps at 65535, so a call
    with more tokens (a video DiT's, or the LTX VAE's t*h*w) fails to launch. 65535 tokens run and match."""
    if not CUDA:
        print("rms_rope_grid: not run (the interpreter does not model CUDA's grid limits)")
        return 2
    h, k = _pair("comfy_kitchen", "rms_rope")
    bad = 0
    for tokens in (65535, 65536, 79200):  # 79200 = 22 x 45 x 80 latents: a 720p clip
        args = h.make_inputs(_case((1, tokens, 2, 128), torch.float16))
        try:
            out = k.rms_rope(*args)
            torch.cuda.synchronize()
            err = _max_err(out, h.reference(*args))
            print(f"rms_rope_grid: {tokens} tokens run, max error {err:.2e}")
            bad += err > 2e-2
        except Exception as e:  # noqa: BLE001 - the failure is what this shows
            print(f"rms_rope_grid: {tokens} tokens FAIL: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            bad += 1
    return 1 if bad else 0


def entmax_interp() -> int:
    """triton_entmax with the docstring's call: under TRITON_INTERPRET=1 the file's _autotune returns the bare kernel
    (no autotune) and nothing passes BLOCK_N, so every call raises a TypeError; on a GPU the autotuner supplies it."""
    h, k = _pair("adasplash", "triton_entmax")
    args = h.make_inputs(_case(h.AUDIT_SHAPE, torch.float32))
    try:
        y = k.triton_entmax(*args)
    except Exception as e:  # noqa: BLE001
        print(f"entmax_interp: FAILS ({'interpreter' if not CUDA else 'GPU'}): {type(e).__name__}: {str(e)[:200]}")
        return 1
    err = _max_err(y, h.reference(*args))
    print(f"entmax_interp: runs ({'interpreter' if not CUDA else 'GPU'}), max error {err:.2e}, "
          f"row sums within {(y.double().sum(-1) - 1).abs().max().item():.2e} of 1")
    return 1 if err > 1e-4 else 0


def mx_bf16() -> int:
    """qdq_mxfp4_triton on bf16 activations against the harness's reference (and the fp16 path, whose codes and
    scales are the same): under Triton 3.9's CPU interpreter the bf16 upcast gives wrong values (the fp16 path and
    the downcast are right); a GPU run tells a kernel problem from an interpreter gap."""
    h, k = _pair("amd_quark", "mx_triton")
    x16 = h.make_inputs(_case(h.AUDIT_SHAPE, torch.float16))[0]
    bad = 0
    for x in (x16, x16.to(torch.bfloat16)):
        y, r = k.qdq_mxfp4_triton(x, "even"), h.reference(x, "even")
        n = (y.float() != r.float()).sum().item()
        print(f"mx_bf16: {x.dtype} {n} of {y.numel()} values differ, max error {_max_err(y, r):.3g} "
              f"({'GPU' if CUDA else 'interpreter'})")
        bad += n > 0
    return 1 if bad else 0


def mx_ragged() -> int:
    """qdq_mxfp4_triton with in_features 48 (not a multiple of 32: a last block of 16): the masks are `a and b` of two
    tensors, an elementwise and when compiled; under the interpreter Python's `and` keeps only the row mask, so the
    kernel reads and writes past the row (a heap corruption here: not run on the CPU). Callers' MX layers have
    in_features a multiple of 32: a robustness case."""
    if not CUDA:
        print("mx_ragged: not run (under the interpreter the kernel writes out of bounds: heap corruption)")
        return 2
    h, k = _pair("amd_quark", "mx_triton")
    x = h.make_inputs(_case((6, 48), torch.float16))[0]
    y = k.qdq_mxfp4_triton(x, "even")
    r = h.reference(torch.nn.functional.pad(x, (0, 16)), "even")[:, :48]  # the tail block padded with zeros
    n = (y != r).sum().item()
    print(f"mx_ragged: in_features 48: {n} of {y.numel()} values differ from the zero-padded reference")
    return 1 if n else 0


def entmax_autotune() -> int:
    """triton_entmax's forward is autotuned over 30 configs keyed on SIZE_N (also a constexpr): every new row length
    compiles and benchmarks again. Times the first and second call at two lengths (about a minute each)."""
    if not CUDA:
        print("entmax_autotune: not run (autotune is off under the interpreter)")
        return 2
    h, k = _pair("adasplash", "triton_entmax")
    slow = 0
    for n in (1000, 1001):
        x = torch.randn(64, n, device=DEV)
        times = []
        for _ in range(2):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            k.triton_entmax(x, 1.5, 10, True)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        print(f"entmax_autotune: N={n}: first call {times[0] * 1e3:.0f} ms, second {times[1] * 1e3:.2f} ms")
        slow += times[0] > 20 * max(times[1], 1e-4)
    return 1 if slow else 0


def adaln_mean() -> int:
    """adaln computes the variance in one pass (E[x^2] - mean^2 in float32, as the CUDA kernel does): rows whose mean
    is large next to their spread lose the variance (mean 50, std 0.05: error 0.40 on values of unit size). Hidden
    states of the DiTs it serves are near zero-mean: a robustness note."""
    h, k = _pair("comfy_kitchen", "adaln")
    torch.manual_seed(0)
    bad = 0
    for mean, std in ((0.0, 1.0), (50.0, 0.05)):
        x = (mean + std * torch.randn(1, 8, 1536, device=DEV)).half()
        s, t = torch.zeros(1, 1, 1536, device=DEV), torch.zeros(1, 1, 1536, device=DEV)
        err = _max_err(k.adaln(x, s, t), h.reference(x, s, t))
        print(f"adaln_mean: mean {mean}, std {std}: max error {err:.3g}")
        bad += err > 2e-2
    return 1 if bad else 0


def e5m3_nan() -> int:
    """fp8_e5m3_qdq clamps first and rounds by bits: a NaN (exponent 255) comes back as a finite 98304 where the
    format's NaN pattern (0xFF) exists. Callers fake-quantize finite weights and scales: a robustness note."""
    h, k = _pair("amd_quark", "float8_e5m3_triton")
    x = torch.tensor([1.0, float("nan"), 3.0], device=DEV)
    y = k.fp8_e5m3_qdq(x)
    print(f"e5m3_nan: {x.tolist()} -> {y.tolist()}")
    return 0 if torch.isnan(y[1]) else 1


GPU_RUN = "2026-12-06 08:13 H100"
CHECKS = {
    "rms_rope_grid": Check(rms_rope_grid, "1: 65,535 tokens run and match, 65,536 and 79,200 fail to launch (the P0)", 90),
    "entmax_interp": Check(entmax_interp, "0: the public call runs and matches (the P0 is the interpreter mode's)", 90),
    "mx_bf16": Check(mx_bf16, "0: bf16 matches on the GPU (the CPU mismatch is an interpreter gap)", 90),
    "mx_ragged": Check(mx_ragged, "0: in_features 48 right (the CPU's heap corruption is the interpreter's `and`)", 90),
    "entmax_autotune": Check(entmax_autotune, "1: each new row length autotunes again (a note)", 150),
    "adaln_mean": Check(adaln_mean, "1: the one-pass variance is off at mean 50 (a robustness note)", 90),
    "e5m3_nan": Check(e5m3_nan, "1: NaN comes back as 98304 (a robustness note)", 90),
}
