"""The known problems of the held_out_25 (flashnn 0.1.1) and held_out_26 (auto-gptq 0.7.1, gemlite 0.6.0.post2)
batches, one subcommand each, run on the corpus copies (tests/audit_public_corpus/...) with the callers' inputs.

Each subcommand exits 1 while the problem shows (wrong result, out-of-bounds access, run-to-run difference, extra
compiles or benchmark runs), 0 when it does not, 2 when it cannot run here (it needs a GPU). On a CPU machine the
kernels run under Triton's interpreter (TRITON_INTERPRET=1 is set here when there is no CUDA device); the out-of-bounds
loads are seen by a small range check of this script's own on the interpreter's loads (not the audit's), on a GPU by
compute-sanitizer (benchmarks/held_out.py 25_26 runs these under memcheck with the caching allocator off).

  python benchmarks/held_out.py 25_26 gptq_tail        # auto-gptq quant_matmul_248: N tail read past (P0)
  python benchmarks/held_out.py 25_26 gptq_bwd_tail    # auto-gptq transpose kernel: g_idx read past K (P0)
  python benchmarks/held_out.py 25_26 gptq_layout      # auto-gptq: x's K stride taken as 1 (note)
  python benchmarks/held_out.py 25_26 dq_recompile     # flashnn dynamic_quant: a compile per token count (P1; GPU)
  python benchmarks/held_out.py 25_26 a16w8_repeat     # flashnn gemm_a16w8: split-K fp16 atomics (P1; GPU)
  python benchmarks/held_out.py 25_26 autotune_per_call  # flashnn: autotuner rebuilt per call (note)
  python benchmarks/held_out.py 25_26 examples         # every harness's example against its reference
"""

from __future__ import annotations

import importlib.util
import os
import sys
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


def _pair(folder: str, name: str):
    """The harness (its stand-ins installed) and the corpus file, loaded as the probes load them."""
    h = _load(HARNESSES / folder / f"{name}.py", f"h_{folder}_{name}")
    return h, _load(CORPUS / folder / f"{name}.py", f"p2t_target_{folder}_{name}")


class OutOfBounds(Exception):
    """A load outside every registered tensor (raised before the load runs)."""


class _Ranges:
    """Out-of-bounds loads under the interpreter: every pointer a load dereferences (mask true) must fall inside one
    of the registered tensors, else OutOfBounds before the load runs. Wraps the interpreter builder's create_load /
    create_masked_load; CPU only."""

    def __init__(self, **tensors: torch.Tensor) -> None:
        self.spans = {k: (t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for k, t in tensors.items()}
        self.bad: dict[str, int] = {}

    def _check(self, ptrs, mask) -> None:
        import numpy as np

        p = np.asarray(ptrs.data).astype(np.uint64).ravel()
        if mask is not None:
            p = p[np.asarray(mask.data).astype(bool).ravel()]
        inside = np.zeros(p.shape, bool)
        for lo, hi in self.spans.values():
            inside |= (p >= lo) & (p < hi)
        for q in p[~inside]:
            near = min(self.spans, key=lambda k: abs(int(q) - self.spans[k][1]))
            self.bad[near] = self.bad.get(near, 0) + 1
        if self.bad:  # stop before the interpreter dereferences it (a wild address segfaults the process)
            raise OutOfBounds(f"out-of-bounds load: {self.bad} pointer(s) outside every argument (nearest end)")

    def __enter__(self) -> _Ranges:
        from triton.runtime import interpreter as itp

        cls = itp.InterpreterBuilder
        self._saved = cls.create_load, cls.create_masked_load
        load, masked = self._saved

        def create_load(b, ptr, *a):
            self._check(ptr, None)
            return load(b, ptr, *a)

        def create_masked_load(b, ptrs, mask, *a):
            self._check(ptrs, mask)
            return masked(b, ptrs, mask, *a)

        cls.create_load, cls.create_masked_load = create_load, create_masked_load
        return self

    def __exit__(self, *exc) -> None:
        from triton.runtime import interpreter as itp

        itp.InterpreterBuilder.create_load, itp.InterpreterBuilder.create_masked_load = self._saved


def _sizes(default: tuple[int, ...]) -> tuple[int, ...]:
    """HO2526_SIZE=896 runs one size only (the GPU part runs each size in its own compute-sanitizer process)."""
    one = os.environ.get("HO2526_SIZE")
    return (int(one),) if one else default


def _gptq_inputs(h, m: int, k: int, n: int, seed: int = 0):
    from pytorch_to_triton.worker.validation.tasks import Case

    args = h.make_inputs(Case("example", (m, k, n), torch.float32, "cpu", seed))
    return [a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args]


def gptq_tail() -> int:
    """quant_matmul_248 as QuantLinear.forward calls it for Qwen2-0.5B-GPTQ-Int4's q_proj (outfeatures 896, asserted
    only % 32): with the autotuner's first config (BLOCK_SIZE_N 256; the pruner keeps it: next_power_of_2(896) = 1024)
    the last column block covers columns 768..1023 and its loads of qweight, scales and qzeros have no N mask
    (kernels.py:159, 160, 166): 128 columns past each row, past the tensors at the last row. The stored columns are masked,
    so the output is right; the reads are out of bounds. Forced here to that config (one of the six the GPU autotuner
    times); 1024 outfeatures (a multiple of 256) reads nothing past."""
    h, k = _pair("auto_gptq", "kernels")
    k.quant_matmul_248_kernel.configs = k.quant_matmul_248_kernel.configs[:1]  # 64 x 256 x 32, used unpruned
    shown = 0
    for n in _sizes((896, 1024)):
        x, qw, sc, qz, gi, bits, maxq = _gptq_inputs(h, 6, 896, n)
        if CUDA:  # compute-sanitizer memcheck (the GPU part, caching allocator off) sees the reads past
            out = k.quant_matmul_248(x, qw, sc, qz, gi, bits, maxq)
            torch.cuda.synchronize()
            bad = {}
        else:
            try:
                with _Ranges(x=x, qweight=qw, scales=sc, qzeros=qz, g_idx=gi) as r:
                    out = k.quant_matmul_248(x, qw, sc, qz, gi, bits, maxq)
            except Exception as e:  # noqa: BLE001 - the interpreter wraps it in InterpreterError
                if "out-of-bounds load" not in str(e):
                    raise
                print(f"gptq_tail: outfeatures {n}: {e}")
                shown += n == 896
                continue
            bad = r.bad
        err = (out.double() - h.reference(x, qw, sc, qz, gi, bits, maxq).double()).abs().max().item()
        print(f"gptq_tail: outfeatures {n}: out-of-bounds loads {bad or 'none seen'} "
              f"({'compute-sanitizer decides on the GPU' if CUDA else 'interpreter range check'}); max |out - ref| {err:.3g}")
    return 1 if shown else 0


def gptq_bwd_tail() -> int:
    """transpose_quant_matmul_248 (QuantLinearFunction.backward, the trainable path: grad_input = grad_out @ W^T) for
    infeatures 896: the first config's BLOCK_SIZE_K 256 covers k 768..1023 in the last block and g_idx is loaded with
    no K mask (kernels.py:306, `g_idx = tl.load(g_ptrs)`): 128 group indices read past g_idx, then used to address
    scales and qzeros (lines 309-310, loaded at 318-319: wild reads at whatever index lies there). Columns k >= K are masked at the
    store. infeatures 1024 reads nothing past."""
    h, k = _pair("auto_gptq", "kernels")
    k.transpose_quant_matmul_248_kernel.configs = k.transpose_quant_matmul_248_kernel.configs[:1]  # 64 x 32 x 256
    shown = 0
    for kin in _sizes((896, 1024)):
        x, qw, sc, qz, gi, bits, maxq = _gptq_inputs(h, 6, kin, 896)
        g = torch.randn(6, 896, device=DEV).half()  # dL/dout
        if CUDA:
            out = k.transpose_quant_matmul_248(g, qw, sc, qz, gi, bits, maxq)
            torch.cuda.synchronize()
            bad = {}
        else:
            try:
                with _Ranges(g=g, qweight=qw, scales=sc, qzeros=qz, g_idx=gi) as r:
                    out = k.transpose_quant_matmul_248(g, qw, sc, qz, gi, bits, maxq)
            except Exception as e:  # noqa: BLE001 - the interpreter wraps it in InterpreterError
                if "out-of-bounds load" not in str(e):
                    raise
                print(f"gptq_bwd_tail: infeatures {kin}: {e}")
                shown += kin == 896
                continue
            bad = r.bad
        q = h._unpack_rows(qw, bits, kin)
        z = h._unpack_rows(qz.T.contiguous(), bits, sc.shape[1]).T + 1
        w = (q - z[gi.long()]).double() * sc.double()[gi.long()]
        err = (out.double() - g.double() @ w.T).abs().max().item()
        print(f"gptq_bwd_tail: infeatures {kin}: out-of-bounds loads {bad or 'none seen'}; max |dx - ref| {err:.3g}")
    return 1 if shown else 0


def gptq_layout() -> int:
    """quant_matmul_248 advances the activation pointer by BLOCK_SIZE_K elements (kernels.py:173), not BLOCK_SIZE_K *
    stride_ak: right for the contiguous x.reshape(-1, infeatures) QuantLinear passes, wrong for an x whose K stride is
    not 1 (a column-major copy here). A note: the callers' x is contiguous. Run with the 64 x 128 x 32 config (no N tail
    at 896, so nothing is read past the weights)."""
    h, k = _pair("auto_gptq", "kernels")
    k.quant_matmul_248_kernel.configs = k.quant_matmul_248_kernel.configs[2:3]
    x, qw, sc, qz, gi, bits, maxq = _gptq_inputs(h, 6, 896, 896)
    ref = h.reference(x, qw, sc, qz, gi, bits, maxq).double()
    errs = {}
    for name, xx in (("contiguous x", x), ("column-major x", x.t().contiguous().t())):
        errs[name] = (k.quant_matmul_248(xx, qw, sc, qz, gi, bits, maxq).double() - ref).abs().max().item()
    print("gptq_layout: max |out - ref|: " + ", ".join(f"{n} {e:.3g}" for n, e in errs.items()))
    return 1 if errs["column-major x"] > 0.1 else 0


def dq_recompile() -> int:
    """triton_dynamic_quantize passes M=num_tokens as a tl.constexpr (dynamic_quant.py:31; the kernel never reads it):
    every distinct token count of a serving step compiles the kernel again. GPU only: counts the compiled variants
    after calls with 3, 5 and 7 tokens (1 expected without the constexpr, 3 with it)."""
    if not CUDA:
        print("dq_recompile: needs a GPU (the interpreter compiles nothing)")
        return 2
    _, d = _pair("flashnn", "dynamic_quant")
    kern = d._triton_dynamic_quantize_kernel
    for t in (3, 5, 7, 5):
        x = torch.randn(t, 4096, device=DEV).half()
        d.triton_dynamic_quantize(torch.empty(t, 4096, dtype=torch.int8, device=DEV), x,
                                  torch.empty(t, dtype=torch.half, device=DEV))
    torch.cuda.synchronize()
    n = sum(len(c[0]) for c in kern.device_caches.values()) if hasattr(kern, "device_caches") else len(kern.cache[0])
    print(f"dq_recompile: {n} compiled variants after token counts 3, 5, 7, 5")
    return 1 if n >= 3 else 0


def a16w8_repeat() -> int:
    """triton_gemm_a16w8_forward's split-K (SPLIT_K 4 by default): each program adds its fp16 partial tile to out with
    tl.atomic_add (gemm_a16w8.py:177), in arrival order, so the fp16 sums differ run to run. GPU only (the interpreter
    runs programs in order): 20 runs of GemmWeightOnly's int8 call, M 5, N 4096, K 4096."""
    if not CUDA:
        print("a16w8_repeat: needs a GPU (the interpreter runs programs in order)")
        return 2
    h, g = _pair("flashnn", "gemm_a16w8")
    from pytorch_to_triton.worker.validation.tasks import Case

    out, act, w, s = [a.to(DEV) for a in h.make_inputs(Case("example", (5, 4096, 4096), torch.float32, "cpu", 0))]
    runs = [g.triton_gemm_a16w8_forward(torch.zeros_like(out), act, w, s).clone() for _ in range(20)]
    differ = sum(not torch.equal(runs[0], r) for r in runs[1:])
    print(f"a16w8_repeat: {differ} of 19 runs differ bitwise from the first; max spread "
          f"{max((r.float() - runs[0].float()).abs().max().item() for r in runs):.3g}")
    return 1 if differ else 0


def examples() -> int:
    """Each harness's example call against its reference at the harness's tolerances (the compare module's defaults
    otherwise), loaded as the probes load them (harness first, its stand-ins installed): one row per file; exit 1 if
    one fails. A check of the harnesses on this machine's Triton, not of the audit."""
    from pytorch_to_triton.worker.validation.compare import DEFAULT_TOLERANCES
    from pytorch_to_triton.worker.validation.tasks import Case, load_module

    failed = 0
    for folder, name in (("flashnn", "rms_norm"), ("flashnn", "rms_norm_dquant"), ("flashnn", "dynamic_quant"),
                         ("flashnn", "gemm_a8w8"), ("flashnn", "gemm_a16w8"), ("auto_gptq", "kernels"),
                         ("gemlite", "bitpack")):
        h = load_module(HARNESSES / folder / f"{name}.py", "harness")
        t = load_module(CORPUS / folder / f"{name}.py", "target")
        args = h.make_inputs(Case("example", tuple(h.AUDIT_SHAPE), torch.float32, "cpu", 0))
        args = [a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args]
        mine = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        out = getattr(t, h.ENTRY)(*args)
        ref = h.reference(*mine)
        if ref is None:  # in place: the mutated arguments
            outs, refs = args, mine
        else:
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        worst = []
        for o, r in zip(outs, refs):
            if not isinstance(o, torch.Tensor):
                continue
            dt = str(o.dtype).removeprefix("torch.")
            rt, at = getattr(h, "TOLERANCES", {}).get(dt) or DEFAULT_TOLERANCES.get(dt, (0.0, 0.0))
            d = (o.double() - r.double()).abs()
            bad = int(((d > at + rt * r.double().abs()) | (o.double().isnan() != r.double().isnan())).sum())
            worst.append(f"{dt} {tuple(o.shape)}: {bad} bad, max {d.max().item() if d.numel() else 0:.3g}")
            failed += bool(bad)
        print(f"examples: {folder}/{name} ({h.ENTRY}): " + "; ".join(worst))
    return 1 if failed else 0


def autotune_per_call() -> int:
    """flashnn builds a new triton.autotune wrapper inside every launcher call (rms_norm.py:78, rms_norm_dquant.py:91,
    gemm_a8w8.py:195, gemm_a16w8.py:324): with the package's switch on (flashnn.set_autotune_triton_kernels(True), or
    any value of the environment variable autotune_triton_kernels: os.getenv returns a string, so "0" turns it on too)
    every call re-benchmarks all its configs (14 for rms_norm); with the default (off, one config) nothing is timed.
    Counts the configs benchmarked over two identical rms_norm calls (the interpreter's timings are stubbed)."""
    _, r = _pair("flashnn", "rms_norm")
    kb = sys.modules["flashnn.kernel_backend"]
    from triton.runtime import autotuner

    timed = []
    saved = autotuner.Autotuner._bench
    autotuner.Autotuner._bench = lambda self, *a, config, **k: timed.append(config) or [0.0, 0.0, 0.0]
    try:
        counts = []
        for on in (False, True):
            kb.set_autotune_triton_kernels(on)
            timed.clear()
            x = torch.randn(4, 256, device=DEV).half()
            for _ in range(2):
                r.triton_rmsnorm_forward(x, torch.ones(256, device=DEV).half(), 1e-6)
            counts.append(len(timed))
    finally:
        autotuner.Autotuner._bench = saved
        kb.set_autotune_triton_kernels(False)
    print(f"autotune_per_call: configs benchmarked over two identical calls: {counts[0]} (switch off), "
          f"{counts[1]} (switch on; 14 if the autotuner were kept)")
    return 1 if counts[1] > 14 else 0


def dq_tie() -> int:
    """flashnn dynamic_quant's example, its int8 codes compared EXACTLY with the exact reference (round half away from
    zero in float64) and with fp16 arithmetic as the package's torch path does it. The interpreter differs at 2 of
    24,576 codes (-63 for -64 at row 1, cols 554 and 1874: x = -absmax / 2, a tie at -63.5): the false P0 label (a
    rounding tie, one step) holds while every difference is one step."""
    if not CUDA:
        print("dq_tie: not run (the GPU's codes are the question)")
        return 2
    h, t = _pair("flashnn", "dynamic_quant")
    out, x, sc = [a.cuda() for a in h.make_inputs(_case(tuple(h.AUDIT_SHAPE), torch.float32))]
    t.triton_dynamic_quantize(out, x, sc)
    torch.cuda.synchronize()
    ref, rs = torch.empty_like(out), torch.empty_like(sc)
    h.reference(ref, x, rs)
    q = x * (torch.tensor(127.0, dtype=torch.float16, device=x.device) / x.abs().amax(-1, keepdim=True))
    f16 = torch.where(q > 0, q + 0.5, q - 0.5).to(torch.int8)
    d = (out.int() - ref.int()).abs()
    print(f"dq_tie: codes differing from the exact reference {int((d > 0).sum())} of {d.numel()}, max step "
          f"{int(d.max())}; gpu == fp16 path everywhere: {bool(torch.equal(out, f16))}")
    return 1 if int(d.max()) > 1 else 0


def _case(shape, dtype):
    from pytorch_to_triton.worker.validation.tasks import Case

    return Case("example", shape, dtype, "cpu", 0)


REPROS = {"rms_norm": "layout: transposed", "rms_norm_dquant": "layout: transposed",
          "dynamic_quant": "reference: example vs reference", "gemm_a16w8": "reference: example vs reference"}


def probe_repros() -> int:
    """The four false probe P0s of held_out_25, each probe's own reproducer (pytorch_to_triton.probe_repro) on this
    device: layout ones FAIL (the kernel really reads a transposed x wrong; false because callers give contiguous x),
    gemm_a16w8's reference FAILs ("1 outputs vs 4": the harness's in-place reference), dynamic_quant's reference
    FAILs only with codes one step off at the tie (as dq_tie)."""
    import subprocess
    import sys

    for f, only in REPROS.items():
        r = subprocess.run([sys.executable, "-m", "pytorch_to_triton.probe_repro",
                            str(CORPUS / "flashnn" / f"{f}.py"), "--harness", str(HARNESSES / "flashnn" / f"{f}.py"),
                            "--only", only], cwd=ROOT, capture_output=True, text=True, timeout=140)
        first = next((ln for ln in r.stdout.splitlines() if ln.startswith(("FAIL", "PASS", "ok"))), r.stdout[-160:])
        print(f"probe_repros: {f} ({only}) rc={r.returncode}: {first[:160]}")
    return 1


GPU_RUN = "2026-12-06 08:13 H100"
PENDING = ["dq_tie", "probe_repros"]  # never run on a GPU yet
CHECKS = {
    "examples": Check(examples, "0: every harness's example call matches its reference"),
    "dq_recompile": Check(dq_recompile, "1: 3 compiled variants after 3, 5, 7, 5 tokens (the known P1)"),
    "a16w8_repeat": Check(a16w8_repeat, "1: some of 20 split-K runs differ bitwise (the known P1)"),
    "autotune_per_call": Check(autotune_per_call, "1: 28 configs timed over two calls, not 14 (a note)"),
    "gptq_layout": Check(gptq_layout, "1: a column-major x read wrong, the contiguous one right (a note)"),
    "gptq_tail": Check(gptq_tail, "0 (the stored columns are right; memcheck shows the reads)"),
    "gptq_bwd_tail": Check(gptq_bwd_tail, "0 (memcheck shows the reads)"),
    "gptq_tail_896_memcheck": Check(gptq_tail, "ERROR SUMMARY > 0 at outfeatures 896 (reads past qweight/scales/"
                                    "qzeros: the known P0)", 120, "memcheck", {"HO2526_SIZE": "896"}),
    "gptq_tail_1024_memcheck": Check(gptq_tail, "ERROR SUMMARY 0 at 1024 (the control)", 120, "memcheck",
                                     {"HO2526_SIZE": "1024"}),
    "gptq_bwd_tail_896_memcheck": Check(gptq_bwd_tail, "ERROR SUMMARY > 0 (reads past g_idx: the known P0)", 120,
                                        "memcheck", {"HO2526_SIZE": "896"}),
    "dq_tie": Check(dq_tie, "0: at most one step off anywhere (the false P0 label holds)", 120),
    "probe_repros": Check(probe_repros, "rms_norm, rms_norm_dquant, gemm_a16w8 FAIL; dynamic_quant as dq_tie", 600),
}
