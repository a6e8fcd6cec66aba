"""The known problems of the held_out_21 (conch-triton-kernels 1.3) and held_out_22 (cut-cross-entropy 25.1.1) batches,
one subcommand each, run on the corpus copies (tests/audit_public_corpus/...) with the callers' inputs.

Each subcommand exits 1 while the problem shows (wrong result, crash or run-to-run difference), 0 when it does not,
2 when it cannot run here (no GPU, or too little memory). On a CPU machine the kernels run under Triton's interpreter
(the runner sets TRITON_INTERPRET=1 when there is no CUDA device), except `gelu_half`, which compiles for sm_90 there.

  python benchmarks/held_out.py 21_22 int8_round      # conch int8: truncates where vLLM rounds (P0)
  python benchmarks/held_out.py 21_22 gelu_half       # conch gelu_tanh_and_mul: fp16/bf16 do not compile (P0)
  python benchmarks/held_out.py 21_22 int8_strided    # conch int8: row-strided input read as dense (note)
  python benchmarks/held_out.py 21_22 cache_hnd       # conch reshape_and_cache: HND cache head stride (note)
  python benchmarks/held_out.py 21_22 rms_int32       # conch rms_norm: int32 token offset (note; GPU, 9 GB)
  python benchmarks/held_out.py 21_22 cce_repeat      # cut-cross-entropy: run-to-run differences (P1; GPU)
  python benchmarks/held_out.py 21_22 cce_int32       # cut-cross-entropy: int32 row offset (note; GPU, 4 GB)
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
    spec.loader.exec_module(mod)
    return mod


def _interp_math() -> None:
    if os.environ.get("TRITON_INTERPRET") == "1":  # libdevice math in NumPy under the interpreter, as the audit's worker
        sys.path.insert(0, str(ROOT / "server"))
        from pytorch_to_triton.worker.device.interp_libdevice import install
        install()


def _conch(name: str):
    _interp_math()
    return _load(CORPUS / "conch_triton_kernels" / f"{name}.py", f"conch_{name}")


def _cce(name: str):
    _interp_math()
    _load(HARNESSES / "cut_cross_entropy" / f"{name}.py", f"h_{name}")  # the package stand-in (corpus folder)
    return _load(CORPUS / "cut_cross_entropy" / f"{name}.py", f"cut_cross_entropy.{name}")


def int8_round() -> int:
    """static_scaled_int8_quant_launcher on fp16 activations [8, 4096] with their calibrated scale: the kernel casts
    x / scale to int8 with .to(tl.int8), which truncates toward zero; vLLM's kernel (float_to_int8_rn) rounds."""
    k = _conch("int8")
    torch.manual_seed(0)
    x = torch.randn(8, 4096, dtype=torch.float16, device=DEV)
    scale = (x.float().abs().amax() / 127).reshape(1)
    out = torch.zeros_like(x, dtype=torch.int8)
    k.static_scaled_int8_quant_launcher(out, x, scale)
    want = torch.round(x.float() * (1.0 / scale)).clamp(-128, 127).to(torch.int8)
    trunc = (x.float() * (1.0 / scale)).clamp(-128, 127).to(torch.int8)
    bad = (out != want).sum().item()
    err = (out.float() * scale - x.float()).abs().mean().item()
    err_rn = (want.float() * scale - x.float()).abs().mean().item()
    print(f"int8_round: {bad} of {out.numel()} codes differ from round-to-nearest (equal to truncation: "
          f"{torch.equal(out, trunc)}); mean |dequantised error| {err:.5f} vs {err_rn:.5f} rounded")
    return 1 if bad else 0


def int8_strided() -> int:
    """static_scaled_int8_quant_launcher indexes rows as token_idx * hidden_size and asserts nothing: a column slice
    of a wider buffer is read as dense rows (the callers give contiguous activations: a robustness note)."""
    k = _conch("int8")
    torch.manual_seed(0)
    x = torch.randn(6, 8192, dtype=torch.float16, device=DEV)[:, :4096]
    scale = (x.float().abs().amax() / 127).reshape(1)
    out = torch.zeros_like(x, dtype=torch.int8)
    k.static_scaled_int8_quant_launcher(out, x, scale)
    want = (x.float() * (1.0 / scale)).clamp(-128, 127).to(torch.int8)  # the kernel's own truncation: layout only
    bad = (out != want).sum().item()
    print(f"int8_strided: row stride {x.stride(0)}, hidden {x.shape[1]}: {bad} of {out.numel()} codes wrong")
    return 1 if bad else 0


def gelu_half() -> int:
    """gelu_tanh_and_mul in fp32, fp16, bf16: the constexpr floats beta and kappa do not promote an fp16/bf16 tensor,
    so libdevice.tanh (fp32/fp64 only) gets a half tensor and the kernel does not compile. On a GPU: the launcher;
    without one: triton.compile for sm_90 (the interpreter's NumPy libdevice accepts any dtype and hides it)."""
    k = _conch("gelu_tanh_and_mul")
    bad = 0
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        try:
            if CUDA:
                x = torch.randn(4, 2 * 9216, dtype=dt, device=DEV)
                out = torch.empty(4, 9216, dtype=dt, device=DEV)
                k.gelu_tanh_and_mul_launcher(out, x)
                d = 9216
                ref = torch.nn.functional.gelu(x[:, :d].double(), approximate="tanh") * x[:, d:].double()
                ok = torch.allclose(out.double(), ref, rtol=2e-2, atol=2e-2)
                print(f"gelu_half: {dt} runs, matches the float64 reference: {ok}")
                bad += not ok
            else:
                import triton
                from triton.backends.compiler import GPUTarget
                from triton.compiler import ASTSource
                ty = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dt]
                sig = {"out_ptr": "*" + ty, "out_stride": "i32", "in_ptr": "*" + ty, "in_stride": "i32", "d": "i32",
                       "cxpr_block_size": "constexpr", "cxpr_beta": "constexpr", "cxpr_kappa": "constexpr"}
                src = ASTSource(k._gelu_tanh_and_mul_kernel, sig, constexprs={
                    "cxpr_block_size": 256, "cxpr_beta": k._M_SQRT2 * k._M_2_SQRTPI * 0.5, "cxpr_kappa": 0.044715})
                triton.compile(src, target=GPUTarget("cuda", 90, 32))
                print(f"gelu_half: {dt} compiles for sm_90")
        except Exception as e:  # noqa: BLE001 - the failure is what this shows
            lines = [x for x in str(e).splitlines() if x.strip()]
            print(f"gelu_half: {dt} FAILS: {type(e).__name__}: {' | '.join(lines[-3:])[:300]}")
            bad += dt != torch.float32
    return 1 if bad else 0


def cache_hnd() -> int:
    """reshape_and_cache_launcher writes the cache at kv_head_index * kv_head_stride, the KEY's head stride
    (kv_cache_head_stride is passed and never used): right for the default NHD cache, where both are head_size;
    wrong for a cache whose heads are strided otherwise (an HND-ordered cache, vLLM's FlashInfer layout)."""
    k = _conch("reshape_and_cache")
    torch.manual_seed(0)
    t, h, kvh, d, bs, pages = 5, 4, 2, 128, 16, 4
    qkv = torch.randn(t, (h + 2 * kvh) * d, dtype=torch.float16, device=DEV)
    key = qkv[:, h * d:(h + kvh) * d].view(t, kvh, d)
    value = qkv[:, (h + kvh) * d:].view(t, kvh, d)
    slots = torch.tensor([3, 17, 18, -1, 40], device=DEV)
    bad = 0
    for layout in ("NHD", "HND"):
        if layout == "NHD":
            kc, vc = (torch.zeros(pages, bs, kvh, d, dtype=torch.float16, device=DEV) for _ in range(2))
        else:
            kc, vc = (torch.zeros(pages, kvh, bs, d, dtype=torch.float16, device=DEV).transpose(1, 2)
                      for _ in range(2))
        rk, rv = kc.clone(), vc.clone()
        for i, s in enumerate(slots.tolist()):
            if s >= 0:
                rk[s // bs, s % bs], rv[s // bs, s % bs] = key[i], value[i]
        k.reshape_and_cache_launcher(key, value, kc, vc, slots)
        wrong = (kc != rk).sum().item() + (vc != rv).sum().item()
        print(f"cache_hnd: {layout} cache strides {tuple(kc.stride())}: {wrong} cache elements wrong")
        bad += layout == "HND" and wrong > 0
    return 1 if bad else 0


def rms_int32() -> int:
    """fused_add_rms_norm_launcher's token_offset = token_index * hidden_size is int32: past 2**31 elements
    (262,144 tokens at hidden 8192) the last rows are read and written at a wrapped offset. GPU only (9 GB)."""
    if not CUDA:
        print("rms_int32: needs a GPU (two 4.3 GB fp16 tensors)")
        return 2
    k = _conch("rms_norm")
    hidden, tokens = 8192, (1 << 31) // 8192 + 2
    x = torch.randn(tokens, hidden, dtype=torch.float16, device=DEV)
    res = torch.randn(tokens, hidden, dtype=torch.float16, device=DEV)
    w = torch.ones(hidden, dtype=torch.float16, device=DEV)
    rows = [0, tokens - 2, tokens - 1]
    s = (x[rows] + res[rows]).float()
    want = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6)).half()
    try:
        k.fused_add_rms_norm_launcher(x, res, w, 1e-6)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        print(f"rms_int32: {tokens} tokens x {hidden}: crash {type(e).__name__}: {str(e)[:200]}")
        return 1
    err = [(x[r].float() - want[i].float()).abs().max().item() for i, r in enumerate(rows)]
    print(f"rms_int32: {tokens} tokens x {hidden}: max |error| of rows {rows}: {[f'{v:.3g}' for v in err]}")
    return 1 if max(err[1:]) > 1e-2 else 0


def _cce_inputs(n: int, v: int, d: int, dtype: torch.dtype):
    torch.manual_seed(0)
    e = torch.randn(n, d, dtype=dtype, device=DEV)
    c = (0.02 * torch.randn(v, d, device=DEV)).to(dtype)
    targets = torch.randint(0, v, (n,), device=DEV)
    valids = torch.arange(n - 1, dtype=torch.int32, device=DEV)  # shift=True, every target kept
    return e, c, targets, valids


def cce_repeat() -> int:
    """The three CCE entries ten times each on one input (Llama-3-8B's head: V 128256, D 4096, 8192 tokens, bf16):
    the lse merge under a spin lock (tl_logaddexp in arrival order), logit_avg's and indexed_dot's float atomic_add
    over the D chunks, and the backward's lock-adds into dE / dC in arrival order give run-to-run differences."""
    if not CUDA:
        print("cce_repeat: needs a GPU (the interpreter runs programs in order)")
        return 2
    lse_mod, dot_mod, bwd_mod = _cce("cce_lse_forward"), _cce("indexed_dot"), _cce("cce_backward")
    e, c, targets, valids = _cce_inputs(8192, 128256, 4096, torch.bfloat16)
    c.requires_grad_()
    runs: dict[str, list[torch.Tensor]] = {"lse": [], "logit_avg": [], "neg_dot": [], "dE": [], "dC": []}
    for _ in range(10):
        lse, la = lse_mod.cce_lse_forward_kernel(e, c, valids, None, True)
        nd = dot_mod.indexed_neg_dot_forward_kernel(e, c, targets, True, valids, None, torch.float32)
        de, dc = bwd_mod.cce_backward_kernel(torch.ones((), device=DEV), e, c, lse, valids, None,
                                             torch.finfo(torch.bfloat16).eps / 32, targets, True,
                                             torch.argsort(la).to(torch.int32), 1.0 / valids.numel())
        for name, t in zip(runs, (lse, la, nd, de, dc)):
            runs[name].append(t.detach().clone())
    bad = 0
    for name, ts in runs.items():
        differ = sum(not torch.equal(t, ts[0]) for t in ts[1:])
        spread = max((t.float() - ts[0].float()).abs().max().item() for t in ts)
        print(f"cce_repeat: {name}: {differ} of 9 runs differ from run 0 bitwise, max |diff| {spread:.3g}")
        bad += differ > 0
    return 1 if bad else 0


def cce_int32() -> int:
    """cce_lse_forward's e offsets are offs_b * stride_eb in int32: a row index past 2**31 / D (524,288 at D 4096) is
    read at a wrapped offset. valids picks rows 0 and N-1 of an e of N = 524,296 rows: lse of the last row."""
    if not CUDA:
        print("cce_int32: needs a GPU (a 4.3 GB e)")
        return 2
    lse_mod = _cce("cce_lse_forward")
    n, v, d = (1 << 31) // 4096 + 8, 4096, 4096
    e = torch.randn(n, d, dtype=torch.bfloat16, device=DEV)
    c = (0.02 * torch.randn(v, d, device=DEV)).to(torch.bfloat16)
    valids = torch.tensor([0, n - 1], dtype=torch.int32, device=DEV)
    try:
        lse = lse_mod.cce_lse_forward_kernel(e, c, valids)
        torch.cuda.synchronize()
    except Exception as e2:  # noqa: BLE001
        print(f"cce_int32: crash {type(e2).__name__}: {str(e2)[:200]}")
        return 1
    want = torch.logsumexp(e[valids.long()].float() @ c.float().T, -1)
    err = (lse - want).abs().tolist()
    print(f"cce_int32: N={n}, D={d}: |lse error| of rows 0 and N-1: {[f'{x:.3g}' for x in err]}")
    return 1 if err[1] > 1e-2 else 0


GPU_RUN = None
CHECKS = {
    "int8_round": Check(int8_round, "1: truncation on the GPU too (the known P0)"),
    "gelu_half": Check(gelu_half, "1: fp16/bf16 CompilationError, fp32 matches (the known P0)", interpret=False),
    "cache_hnd": Check(cache_hnd, "1: HND wrong, NHD right (a note)"),
    "int8_strided": Check(int8_strided, "1 (a note)"),
    "cce_repeat": Check(cce_repeat, "1: some of lse/logit_avg/neg_dot/dE/dC differ run to run (the known P1)"),
    "rms_int32": Check(rms_int32, "1 if the int32 offsets wrap on real hardware (a robustness note; 9 GB)"),
    "cce_int32": Check(cce_int32, "1 if the int32 offsets wrap on real hardware (a robustness note; 4 GB)"),
}
