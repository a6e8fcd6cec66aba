"""held_out_23 / held_out_24 checks for the GPU (benchmarks/gpu_parts/held_out_23_24.sh), NOT the audit: they run the
corpus files' entries by hand to confirm the harnesses and the known problems where the CPU interpreter cannot.

    python benchmarks/explore/held_out_23_24/gpu_checks.py harnesses | streaming | bsa_batch | recompile

harnesses  every held_out_23/24 harness's example call on this device vs its reference (expect: all ok; nvfp4 too,
           whose fp8 scale the Triton 3.9 CPU interpreter rounds wrongly; streaming_kernel too on Triton 3.6,
           whose tl.make_block_ptr Triton 3.9 removed): confirms no harness makes a false P0 on the GPU.
           (streaming_kernel's example is head_dim 96, Phi-3-mini's: expect it to FAIL, that is its known P0; the
           same call at head_dim 128 must pass.)
streaming  streaming_forward at head_dim 128 and 96 vs the reference at 1/sqrt(d) and at 1/sqrt(128): the known P0
           is confirmed when d=96 disagrees with 1/sqrt(96) and agrees with 1/sqrt(128) (the padded width).
bsa_batch  block_sparse_attention on a batch of 2 (run under compute-sanitizer memcheck with
           PYTORCH_NO_CUDA_MEMORY_CACHING=1): the known P0 is confirmed by an invalid __global__ read of 4 bytes in
           _triton_block_sparse_attn_fwd_kernel (seqlens[1] of a 1-element tensor).
recompile  compiled variants after calls of the same entry at 48, 64, 80 and again 64 tokens: mxfp4 / nvfp4
           (n_elements constexpr, the known P1: expect the autotuner's 5 configs at the first call, then +1 at 64 and
           at 80, +0 at the repeat), olmo swiglu_valid_prefix (rows constexpr, the known P1: expect 1, 2, 3, 3) and
           olmo swiglu_backward_pair (nothing per count: expect 1, 1, 1, 1).
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "server"))
DEV = "cuda" if torch.cuda.is_available() else "cpu"
if DEV == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run_harness  # noqa: E402

    run_harness.install_interpreter_compat()

FILES = {  # corpus file -> harness, relative to tests/
    "minference/block_sparse_flash_attention.py": "held_out_23",
    "minference/streaming_kernel.py": "held_out_23",
    "minference/xattention_fa.py": "held_out_23",
    "minference/flash_attn_triton.py": "held_out_23",
    "fp_quant/mxfp4.py": "held_out_24",
    "fp_quant/nvfp4.py": "held_out_24",
    "olmo_core/swiglu.py": "held_out_24",
    "olmo_core/swiglu_pairwise.py": "held_out_24",
}


def load(rel: str):
    name = "m_" + rel.replace("/", "_").replace(".", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def pair(f: str):
    h = load(f"tests/audit_public_harnesses/{f}")
    t = load(f"tests/audit_public_corpus/{f}")
    return t, h


def case(shape):
    from pytorch_to_triton.worker.validation.tasks import Case  # torch only: no pydantic, no mcp

    return Case("example", shape, torch.float32, DEV, 0)


def compare(out, ref, tols) -> tuple[bool, str]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    ok, parts = True, []
    for o, r in zip(outs, refs):
        if o is None and r is None:
            continue
        rtol, atol = tols.get(str(o.dtype).removeprefix("torch."), (1e-2, 1e-2)) if o.dtype != torch.bool else (0, 0)
        good = torch.allclose(o.double(), r.double(), rtol=rtol, atol=atol)
        ok &= good
        err = (o.double() - r.double()).abs().max().item() if o.numel() else 0.0
        parts.append(f"{tuple(o.shape)} {str(o.dtype).removeprefix('torch.')} max err {err:.3g}")
    return ok, "; ".join(parts)


def harnesses() -> None:
    print(f"device {DEV} torch {torch.__version__}")
    for f, s in FILES.items():
        try:
            t, h = pair(f)
            args = h.make_inputs(case(h.AUDIT_SHAPE))
            out = getattr(t, h.ENTRY)(*args)
            if DEV == "cuda":
                torch.cuda.synchronize()
            ok, msg = compare(out, h.reference(*args), getattr(h, "TOLERANCES", {}))
            print(f"{s} {f}: {'ok' if ok else 'MISMATCH'} {msg}")
        except Exception as e:  # noqa: BLE001 - a crash is a result here
            print(f"{s} {f}: CRASH {type(e).__name__}: {str(e)[:200]}")


def streaming() -> None:
    t, h = pair("minference/streaming_kernel.py")
    for d in (128, 96):
        q, k, v, n_init, n_local = h.make_inputs(case((1, 1, 832, d)))
        out = t.streaming_forward(q, k, v, n_init, n_local).double()
        ref = h.reference(q, k, v, n_init, n_local).double()
        wide = h.reference(q * math.sqrt(d / 128), k, v, n_init, n_local).double()  # softmax at 1/sqrt(128)
        print(f"streaming_forward head_dim {d}: max err vs 1/sqrt({d}) {(out - ref).abs().max().item():.3g}, "
              f"vs 1/sqrt(128) {(out - wide).abs().max().item():.3g}")


def bsa_batch() -> None:
    t, h = pair("minference/block_sparse_flash_attention.py")
    q, k, v, top_k = h.make_inputs(case((2, 1, 200, 128)))
    both = t.block_sparse_attention(q, k, v, top_k)
    for b in range(2):
        ref = h.reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], top_k)
        print(f"block_sparse_attention batch of 2, row {b}: max err vs reference "
              f"{(both[b:b + 1].double() - ref.double()).abs().max().item():.3g}")


def _variants(fn) -> int:
    """Compiled variants held by a @triton.jit function (through an autotuner's .fn): -1 if this Triton hides them."""
    while not hasattr(fn, "device_caches") and hasattr(fn, "fn"):
        fn = fn.fn
    caches = getattr(fn, "device_caches", None)
    return -1 if caches is None else sum(len(c[0]) for c in caches.values())


def recompile() -> None:
    if DEV != "cuda":
        print("recompile: needs a GPU (the interpreter compiles nothing)")
        return
    mx, mxh = pair("fp_quant/mxfp4.py")
    nv, nvh = pair("fp_quant/nvfp4.py")
    sw, swh = pair("olmo_core/swiglu.py")
    sp, sph = pair("olmo_core/swiglu_pairwise.py")
    calls = (("mxfp4_forward_kernel", mx.mxfp4_forward_kernel, mx.mxfp4_forward_kernel_wrapper, mxh, 256),
             ("nvfp4_forward_kernel", nv.nvfp4_forward_kernel, nv.nvfp4_forward_kernel_wrapper, nvh, 256),
             ("_swiglu_valid_prefix_kernel", sw._swiglu_valid_prefix_kernel, sw.swiglu_valid_prefix, swh, 96),
             ("_swiglu_backward_pair", sp._swiglu_backward_pair, sp.swiglu_backward_pair, sph, 96))
    for name, kernel, entry, h, width in calls:
        counts = []
        for tokens in (48, 64, 80, 64):  # the last repeats a count: it must compile nothing
            entry(*h.make_inputs(case((tokens, width))))
            torch.cuda.synchronize()
            counts.append(_variants(kernel))
        print(f"compiled variants of {name} after calls at 48, 64, 80, 64 tokens: {counts} (an autotuned kernel "
              f"compiles its configs at the first call; +1 at each new count is a per-count recompile)")


if __name__ == "__main__":
    {"harnesses": harnesses, "streaming": streaming, "bsa_batch": bsa_batch, "recompile": recompile}[sys.argv[1]]()
