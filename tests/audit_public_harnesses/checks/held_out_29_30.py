"""The examples and robustness notes of the held_out_29 (lion-pytorch 0.2.5, hyper-connections 0.4.11) and held_out_30
(accelerated-scan 0.3.1) batches, one subcommand each, run on the corpus copies (tests/audit_public_corpus/...) with
the callers' inputs built by the batches' harnesses (tests/audit_public_harnesses/...).

No known real problem was found in these four files for the inputs their callers give: `examples` shows each entry's
example call (and, for the three autograd Functions, its backward) matching the reference; the other subcommands show
the robustness notes (inputs the callers do not give, or give rarely). Each exits 1 while what it describes shows
(a mismatch, a crash), 0 when it does not, 2 when it cannot run here (it needs a GPU). Without CUDA the kernels run
under Triton's interpreter (TRITON_INTERPRET=1 is set here then, with the audit worker's NumPy libdevice, its no-op
torch.cuda.device and its untimed autotuner: the first config).

  python benchmarks/held_out.py 29_30 examples       # the four example calls (+ backward): expected 0
  python benchmarks/held_out.py 29_30 lion_nan       # lion: a NaN gradient steps p by +lr (note)
  python benchmarks/held_out.py 29_30 lion_layout    # lion: a grad of another layout than p (note)
  python benchmarks/held_out.py 29_30 sinkhorn_bwd   # sinkhorn: backward exact only once converged (note)
  python benchmarks/held_out.py 29_30 lion_int32     # lion: int32 offsets past 2**31 elements (note; GPU)
  python benchmarks/held_out.py 29_30 scan_int32     # scalar scan: B*C*T past 2**31 (note; GPU)
  python benchmarks/held_out.py 29_30 complex_int32  # complex scan: B*C*T past 2**30 (note; GPU)
  python benchmarks/held_out.py 29_30 scan_grid      # scalar scan: C past 65,535 on grid axis 1 (note; GPU)
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import torch
from _common import CORPUS, CUDA, DEV, HARNESSES, ROOT, Check

FILES = (("lion_pytorch", "lion_triton"), ("hyper_connections", "triton_sinkhorn"), ("accelerated_scan", "scalar"),
         ("accelerated_scan", "complex"))


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
        from pytorch_to_triton.worker.device import interp_autotune, interp_compat, interp_libdevice
        interp_libdevice.install()
        interp_compat.install_cuda_device_noop()
        interp_autotune.install()  # the first config, untimed (the interpreter has no benchmarker)
    h = _load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    return h, _load(CORPUS / project / f"{name}.py", f"k_{project}_{name}")


def _case(shape, dtype=torch.float32, seed=0):
    sys.path.insert(0, str(ROOT / "server"))
    from pytorch_to_triton.worker.validation.tasks import Case
    return Case("explore", shape, dtype, DEV, seed)


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out - ref| / max(|ref|) (complex-aware)."""
    out, ref = out.detach().to(torch.complex128 if out.is_complex() else torch.float64), ref.detach()
    ref = ref.to(out.dtype)
    return ((out - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


def _grads(fn, args, g):
    """Gradients of <fn(*args), g> (real part) with respect to the floating/complex tensor arguments."""
    leaves = [a.detach().clone().requires_grad_(True) if torch.is_tensor(a) and (a.is_floating_point() or a.is_complex())
              else a for a in args]
    y = fn(*leaves)
    loss = (y * g.conj()).real.sum() if y.is_complex() else (y * g).sum()
    loss.backward()
    return y.detach(), [a.grad for a in leaves if torch.is_tensor(a) and a.requires_grad]


def examples() -> int:
    """Each harness's example call against its reference (relative error of the largest magnitude), and for the
    autograd Functions the gradients against autograd through the reference (float64 / complex128)."""
    bad = 0
    for project, name in FILES:
        h, k = _pair(project, name)
        args = h.make_inputs(_case(h.AUDIT_SHAPE))
        if name == "lion_triton":  # in place: p and exp_avg after the step
            mine = [a.clone() if torch.is_tensor(a) else a for a in args]
            ref = [a.clone() if torch.is_tensor(a) else a for a in args]
            getattr(k, h.ENTRY)(*mine)
            h.reference(*ref)
            err = max(_rel(mine[0], ref[0]), _rel(mine[2], ref[2]))
            moved = (mine[0] != args[0]).float().mean().item()
            print(f"examples: {project}/{name}: p and exp_avg rel. error {err:.3g} (fraction of p changed {moved:.3f})")
            bad += err > 1e-6
            continue
        entry = getattr(k, h.ENTRY)
        wide = [a.to(torch.complex128 if a.is_complex() else torch.float64) if torch.is_tensor(a) else a for a in args]
        y = entry(*args)  # the example's own tensors (sinkhorn's is a non-contiguous slice)
        yr = h.reference(*wide)
        ferr = _rel(y, yr)
        torch.manual_seed(1)
        g = torch.randn_like(y.real) if not y.is_complex() else torch.complex(torch.randn_like(y.real),
                                                                              torch.randn_like(y.real))
        _, gk = _grads(entry, args, g)
        _, gr = _grads(h.reference, wide, g.to(torch.complex128 if g.is_complex() else torch.float64))
        gerr = max(_rel(a, b) for a, b in zip(gk, gr))
        print(f"examples: {project}/{name}: forward rel. error {ferr:.3g}, backward rel. error {gerr:.3g}")
        bad += ferr > 1e-4 or gerr > 1e-4
    return 1 if bad else 0


def lion_nan() -> int:
    """lion update_fn: a NaN in grad gives update NaN, `update != 0` is true and `update > 0` false, so p moves by +lr,
    where the PyTorch update_fn's sgn_ gives 0 for NaN (torch 2.13: p stays put), and exp_avg turns NaN in both (every
    later Triton step then adds +lr to that element). Callers that train with a GradScaler never step on non-finite
    gradients; without one a NaN gradient is already a failed step: a robustness note (not a wrong result for finite
    inputs)."""
    h, k = _pair("lion_pytorch", "lion_triton")
    p = torch.ones(256, device=DEV)
    grad = torch.ones(256, device=DEV)
    grad[3] = float("nan")
    exp_avg = torch.zeros(256, device=DEV)
    mine = [p.clone(), grad.clone(), exp_avg.clone(), 1e-2, 0.0, 0.9, 0.99]
    ref = [p.clone(), grad.clone(), exp_avg.clone(), 1e-2, 0.0, 0.9, 0.99]
    k.update_fn(*mine)
    h.reference(*ref)
    print(f"lion_nan: p[3] after a NaN gradient: triton {mine[0][3].item()}, PyTorch update_fn {ref[0][3].item()}; "
          f"exp_avg[3] triton {mine[2][3].item()}")
    same = torch.equal(mine[0].isnan(), ref[0].isnan()) and torch.equal(mine[0].nan_to_num(), ref[0].nan_to_num())
    return 0 if same else 1


def lion_layout() -> int:
    """lion update_fn indexes p, grad and exp_avg as flat buffers (p_ptr + offsets): right whenever the three share a
    memory layout, which Lion's callers always give (exp_avg = zeros_like(p) keeps p's strides, and autograd's
    gradient layout contract gives p.grad p's strides for a dense parameter). A grad of another layout (assigned by
    hand, here a transposed p [in, out]^T with a contiguous grad) is paired element by element with the wrong entries:
    a robustness note."""
    h, k = _pair("lion_pytorch", "lion_triton")
    torch.manual_seed(0)
    p = torch.randn(200, 96, device=DEV).t()  # a [96, 200] view with strides (1, 96)
    grad = torch.randn(96, 200, device=DEV)  # contiguous
    exp_avg = torch.zeros_like(p)  # as Lion's state init: p's strides
    mine = [p.clone(), grad.clone(), exp_avg.clone(), 1e-2, 0.0, 0.9, 0.99]
    ref = [p.clone(), grad.clone(), exp_avg.clone(), 1e-2, 0.0, 0.9, 0.99]
    k.update_fn(*mine)
    h.reference(*ref)
    err = max((mine[0] - ref[0]).abs().max().item(), (mine[2] - ref[2]).abs().max().item())
    print(f"lion_layout: transposed p and exp_avg, contiguous grad: max error {err:.3g} (lr 1e-2: a wrong-signed step "
          f"is 2e-2)")
    return 1 if err > 1e-6 else 0


def sinkhorn_bwd() -> int:
    """sinkhorn backward: sinkhorn_kernel_backward_log runs the iterations' backward with the FINAL alpha in every
    round (never the intermediate iterates), which is the exact gradient only where the iterations have converged (a
    doubly stochastic fixed point). At the example's logits (eye + 0.3 noise, 20 iterations) it matches autograd to
    1e-7; with few iterations (sinkhorn_iters is a constructor argument, default 20) or large logits it does not."""
    h, k = _pair("hyper_connections", "triton_sinkhorn")
    torch.manual_seed(0)
    worst = 0.0
    for iters, scale, what in ((20, 1.0, "example logits, 20 iterations"), (3, 1.0, "example logits, 3 iterations"),
                               (20, 10.0, "logits x 10, 20 iterations")):
        x, _ = h.make_inputs(_case(h.AUDIT_SHAPE))
        x = x * scale
        g = torch.randn(x.shape, device=DEV)
        _, (gk,) = _grads(k.TritonSinkhornFunction.apply, (x, iters), g)
        _, (gr,) = _grads(h.reference, (x.double(), iters), g.double())
        err = _rel(gk, gr)
        print(f"sinkhorn_bwd: {what}: backward rel. error {err:.3g}")
        if iters != 20 or scale != 1.0:
            worst = max(worst, err)
    return 1 if worst > 1e-3 else 0


def lion_int32() -> int:
    """lion update_fn: offsets = pid * BLOCK_SIZE + arange in int32, so a parameter of 2**31 elements or more (e.g. a
    flattened FSDP shard or a 256k x 8448 embedding) is addressed wrong past 2**31 (an illegal address or a write
    elsewhere). The largest single parameters of today's open models stay just under it: a robustness note."""
    if not CUDA:
        print("lion_int32: not run (needs 13 GB of tensors and 2**24 programs: a GPU)")
        return 2
    h, k = _pair("lion_pytorch", "lion_triton")
    n = 2**31 + 4096
    try:
        p = torch.ones(n, device=DEV, dtype=torch.bfloat16)
        grad = torch.ones(n, device=DEV, dtype=torch.bfloat16)
        exp_avg = torch.zeros(n, device=DEV, dtype=torch.bfloat16)
        k.update_fn(p, grad, exp_avg, 1e-2, 0.0, 0.9, 0.99)
        torch.cuda.synchronize()
        want = [torch.ones(4096, device=DEV, dtype=torch.bfloat16), torch.ones(4096, device=DEV, dtype=torch.bfloat16),
                torch.zeros(4096, device=DEV, dtype=torch.bfloat16), 1e-2, 0.0, 0.9, 0.99]
        h.reference(*want)  # every element takes the same step
        bad = 0
        for what, t, w in (("p", p, want[0]), ("exp_avg", exp_avg, want[2])):
            for where, part in (("first", t[:4096]), ("around 2**31", t[2**31 - 2048:2**31 + 2048]),
                                ("last", t[-4096:])):
                ok = torch.equal(part, w)
                bad += not ok
                print(f"lion_int32: n = 2**31 + 4096: {what} {where} 4096: "
                      f"{part.float().min().item():.6g}..{part.float().max().item():.6g} "
                      f"(want {w[0].float().item():.6g}) {'ok' if ok else 'WRONG'}")
        return 1 if bad else 0
    except Exception as e:  # noqa: BLE001 - an illegal address is the problem showing
        print(f"lion_int32: n = 2**31 + 4096: {type(e).__name__}: {str(e)[:200]}")
        return 1


def _scan_big(cmd: str, name: str, channels: int, seqlen: int) -> int:
    h, k = _pair("accelerated_scan", name)
    if name == "scalar":
        forget = torch.rand(1, channels, seqlen, device=DEV).mul_(0.001).add_(0.999)
        inputs = torch.rand(1, channels, seqlen, device=DEV)
    else:
        fr = torch.empty(1, channels, seqlen, 2, device=DEV)
        fr[..., 0], fr[..., 1] = 0.99, 0.01
        forget = torch.view_as_complex(fr)
        inputs = torch.view_as_complex(torch.randn(1, channels, seqlen, 2, device=DEV))
    try:
        out = k.scan(forget, inputs)
        torch.cuda.synchronize()
        last = k.scan(forget[:, -1:].contiguous(), inputs[:, -1:].contiguous())
        first = k.scan(forget[:, :1].contiguous(), inputs[:, :1].contiguous())
        torch.cuda.synchronize()
        e_last, e_first = _rel(out[:, -1:], last), _rel(out[:, :1], first)
        print(f"{cmd}: B*C*T = {channels * seqlen} ({channels * seqlen / 2**31:.4f} x 2**31): "
              f"last channel rel. error {e_last:.3g} vs the channel alone, first channel {e_first:.3g}")
        return 1 if max(e_last, e_first) > 1e-5 else 0
    except Exception as e:  # noqa: BLE001 - an illegal address is the problem showing
        print(f"{cmd}: B*C*T = {channels * seqlen}: {type(e).__name__}: {str(e)[:200]}")
        return 1


def scan_int32() -> int:
    """scalar scan: offset = sequence_id * seqlen + t in int32, so B*C*T past 2**31 elements addresses the last
    sequences wrong. The README's largest benchmark is 8 x 1536 x 65536 (0.375 x 2**31) and its quick start 1 x 512 x
    131072: a robustness note."""
    if not CUDA:
        print("scan_int32: not run (26 GB of tensors: a GPU)")
        return 2
    return _scan_big("scan_int32", "scalar", 16385, 131072)


def complex_int32() -> int:
    """complex scan: offset = (sequence_id * seqlen + t) * 2 in int32 (the (real, imag) pairs), so B*C*T past 2**30
    complex elements addresses the last sequences wrong: half the scalar scan's limit. A robustness note."""
    if not CUDA:
        print("complex_int32: not run (26 GB of tensors: a GPU)")
        return 2
    return _scan_big("complex_int32", "complex", 8193, 131072)


def scan_grid() -> int:
    """scalar scan: the grid is (B, C) with the channels on grid axis 1, which CUDA caps at 65,535: a call with more
    channels fails to launch (the interpreter does not model the cap). The README's dims are 512-1536 (a flattened
    4096 x 16 state would reach it): a labelling note. 65,535 channels run and match."""
    if not CUDA:
        print("scan_grid: not run (the interpreter does not model CUDA's grid limits)")
        return 2
    h, k = _pair("accelerated_scan", "scalar")
    bad = 0
    for channels in (65535, 65536):
        forget = torch.rand(1, channels, 64, device=DEV).mul_(0.001).add_(0.999)
        inputs = torch.rand(1, channels, 64, device=DEV)
        try:
            out = k.scan(forget, inputs)
            torch.cuda.synchronize()
            err = _rel(out[:, -8:], h.reference(forget[:, -8:], inputs[:, -8:]))
            print(f"scan_grid: {channels} channels: ran, last 8 channels rel. error {err:.3g}")
            bad += err > 1e-5
        except Exception as e:  # noqa: BLE001 - a launch failure is what this shows
            print(f"scan_grid: {channels} channels: {type(e).__name__}: {str(e)[:160]}")
            bad += 1
    return 1 if bad else 0


# ---- held_out_30's labels (accelerated-scan 0.3.1): out-of-bounds reads and memory traffic, GPU only
C, T = 256, 65536  # 16.8M complex values: 134 MB a complex tensor, well past the 50 MB L2
LAUNCHES = ("complex forward", "complex backward", "scalar forward", "scalar backward")
# Bytes each launch must move at least: every tensor read or written once (complex64 8 B, float32 on 2T values 8 B
# a complex position): forward reads forget, inputs and writes states; backward reads forget, states, d_output and
# writes d_inputs, d_forget.
IDEAL = {"complex forward": (2, 1), "complex backward": (3, 2), "scalar forward": (2, 1), "scalar backward": (3, 2)}
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
           "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum")


def _scan(name: str):
    return _load(CORPUS / "accelerated_scan" / f"{name}.py", f"scan_{name}")


def traffic_launches() -> int:
    """The four launches `traffic` profiles (run under ncu by it)."""
    import torch
    if not torch.cuda.is_available():
        print("traffic: needs a GPU (ncu)")
        return 2
    cplx, scal = _scan("complex"), _scan("scalar")
    torch.manual_seed(0)
    f = torch.polar(0.99 * torch.ones(1, C, T, device="cuda"), 0.01 * torch.rand(1, C, T, device="cuda"))
    x = torch.complex(torch.randn(1, C, T, device="cuda"), torch.randn(1, C, T, device="cuda"))
    f.requires_grad_(), x.requires_grad_()
    cplx.scan(f, x).backward(torch.ones_like(x))
    fs = (0.999 * torch.ones(1, C, 2 * T, device="cuda")).requires_grad_()
    xs = torch.rand(1, C, 2 * T, device="cuda").requires_grad_()
    scal.scan(fs, xs).backward(torch.ones_like(xs))
    torch.cuda.synchronize()
    print("traffic: ran 4 launches")
    return 0


def oob(name: str) -> int:
    """One forward + backward of scan `name` at the harness's [1, 4, 5000] and at [1, 512, 1024] (T below one block),
    checked against the float64 recurrence; memcheck (the part) says whether any access left its tensor."""
    import torch
    if not torch.cuda.is_available():
        print(f"oob_{name}: needs a GPU (compute-sanitizer)")
        return 2
    mod = _scan(name)
    worst = 0.0
    for b, c, t in ((1, 4, 5000), (1, 512, 1024)):
        torch.manual_seed(0)
        f = 0.999 + 0.001 * torch.rand(b, c, t, device="cuda")
        x = torch.rand(b, c, t, device="cuda")
        if name == "complex":
            f, x = torch.complex(f, torch.zeros_like(f)), torch.complex(x, torch.zeros_like(x))
        f.requires_grad_(), x.requires_grad_()
        out = mod.scan(f, x)
        out.real.sum().backward() if name == "complex" else out.sum().backward()
        got = x.grad.real if name == "complex" else x.grad  # d sum(states) / d inputs = 1 + f + f f + ... > 0
        worst = max(worst, float((got <= 0).sum()), float(~torch.isfinite(got).all()))
        print(f"oob_{name}: [{b}, {c}, {t}]: forward + backward ran, d_inputs finite and positive: "
              f"{bool(torch.isfinite(got).all() and (got > 0).all())}")
    torch.cuda.synchronize()
    return 0 if worst == 0 else 1


def _report(path: str) -> int:
    rows = [r for r in csv.reader(Path(path).read_text().splitlines()) if len(r) > 5]
    head, rows = rows[0], rows[1:]
    col = {name: head.index(name) for name in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    val: dict[tuple[int, str], float] = {}
    ids: list[int] = []
    for r in rows:
        i = int(r[col["ID"]])
        if i not in ids:
            ids.append(i)
        val[(i, r[col["Metric Name"]])] = float(r[col["Metric Value"]].replace(",", ""))
    if len(ids) != len(LAUNCHES):
        print(f"traffic: expected {len(LAUNCHES)} profiled launches, got {len(ids)}")
        return 2
    per = C * T * 8  # bytes of one complex64 tensor (= one float32 tensor of [1, C, 2T])
    print("| launch | DRAM read / ideal | DRAM write / ideal | L2 read sectors / ideal | L2 write sectors / ideal "
          "| time (us) |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name, i in zip(LAUNCHES, sorted(ids)):
        nr, nw = IDEAL[name]
        cells = [val[(i, "dram__bytes_read.sum")] / (nr * per), val[(i, "dram__bytes_write.sum")] / (nw * per),
                 32 * val[(i, "lts__t_sectors_srcunit_tex_op_read.sum")] / (nr * per),
                 32 * val[(i, "lts__t_sectors_srcunit_tex_op_write.sum")] / (nw * per)]
        if name.startswith("complex"):
            worst = max(worst, cells[0], cells[1])
        us = val[(i, "gpu__time_duration.sum")] / 1e3  # ncu reports ns with --print-units base
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {us:.0f} |")
    verdict = "no" if worst <= 1.15 else "YES"
    print(f"traffic: complex scan DRAM traffic at most {worst:.2f}x its ideal: inflated by the stride-2 "
          f"lanes: {verdict}")
    return 0 if worst <= 1.15 else 1



def oob_scalar() -> int:
    """scalar.py's backward_scan loads the shifted states with mask=t > 0 only (line 82): for T not a multiple of BLOCK
    2048 the last (batch, channel) reads up to 2047 floats past `states`. Run under memcheck (the runner does)."""
    return oob("scalar")


def oob_complex() -> int:
    """complex.py's same load masks (t > 0) & (t < seqlen): memcheck should see nothing."""
    return oob("complex")


def traffic() -> int:
    """The 16 uncoalesced_access P1s of complex.py (stride-2 (real, imag) lanes, labelled false): ncu's DRAM bytes and
    L2 sectors of one complex forward_scan and backward_scan against the ideal, the scalar scan on the same bytes
    beside them; 1 if the complex scan's DRAM traffic is over 1.15x its ideal (the P1s would be real)."""
    import shutil
    import subprocess
    import sys
    import tempfile

    if not CUDA:
        print("traffic: needs a GPU (ncu)")
        return 2
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "traffic.csv"
        r = subprocess.run([ncu, "--csv", "--print-units", "base", "--log-file", str(log), "-k",
                            "regex:forward_scan|backward_scan", "--metrics", ",".join(METRICS), sys.executable,
                            str(ROOT / "benchmarks" / "held_out.py"), "--one", "29_30", "traffic_launches"],
                           cwd=ROOT, capture_output=True, text=True, timeout=200)
        print(f"traffic: ncu rc={r.returncode} {r.stdout.strip().splitlines()[-1:] if r.stdout.strip() else ''}")
        return _report(str(log)) if log.exists() else 2


GPU_RUN = "2026-12-06 11:06 H100"
PENDING = ["oob_scalar", "oob_complex", "traffic"]  # never run on a GPU yet
CHECKS = {
    "examples": Check(examples, "0: the four example calls and three backwards match (no known problem)", 45),
    "lion_nan": Check(lion_nan, "1 (a robustness note)", 20),
    "lion_layout": Check(lion_layout, "1 (a robustness note)", 20),
    "sinkhorn_bwd": Check(sinkhorn_bwd, "1 (a robustness note)", 30),
    "lion_int32": Check(lion_int32, "1: int32 offsets past 2**31 elements go wrong (0: the int32 notes are false)", 35),
    "scan_int32": Check(scan_int32, "1 (as lion_int32)", 35),
    "complex_int32": Check(complex_int32, "1 (as lion_int32)", 35),
    "scan_grid": Check(scan_grid, "1: 65,535 channels run, 65,536 fail to launch (a note)", 20),
    "oob_scalar": Check(oob_scalar, "ERROR SUMMARY > 0 in backward_scan (the scalar.py:82 P0 is real)", 120, "memcheck"),
    "oob_complex": Check(oob_complex, "ERROR SUMMARY 0 (its load masks t < seqlen too)", 120, "memcheck"),
    "traffic_launches": Check(traffic_launches, "0 (the four launches traffic profiles)", 120),
    "traffic": Check(traffic, "0: complex DRAM bytes within 1.15x of the ideal (the 16 uncoalesced P1s are false)",
                     240),
}
