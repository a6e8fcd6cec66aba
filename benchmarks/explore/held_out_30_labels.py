"""Two GPU checks of held_out_30's labels (accelerated-scan 0.3.1), run by benchmarks/gpu_parts/held_out_30_labels.sh.

1. `oob`: scalar.py's backward_scan loads the shifted states with mask=t > 0 only (line 82), so for T not a multiple of
BLOCK 2048 the last (batch, channel) reads up to 2047 floats past `states` (the interpreter's bounds check saw it: the
probe_grad P0, labelled real). Run under compute-sanitizer memcheck with PYTORCH_NO_CUDA_MEMORY_CACHING=1, one
forward + backward at the harness's [1, 4, 5000] and at [1, 512, 1024]: expected invalid global reads in
backward_scan for `scalar`, none for `complex` (its load masks (t > 0) & (t < seqlen)).

2. Memory traffic of accelerated-scan's complex scan against its ideal, for the uncoalesced_access P1
findings on complex.py (lines 40-43, 61-62, 111-116, 139-150): the kernels address view_as_real's (real, imag) pairs
as two loads (or stores) of stride 2, one at offset and one at offset + 1. The claim to settle is whether that costs
main (DRAM) traffic: each stride-2 access touches twice the sectors it uses, but its partner at + 1 uses the other
half of the same sectors, so the bytes fetched from DRAM should equal the bytes the kernel needs.

  python benchmarks/explore/held_out_30_labels.py oob scalar|complex   # forward + backward at two ragged sizes
  python benchmarks/explore/held_out_30_labels.py run                   # one forward + backward of each scan (ncu)
  python benchmarks/explore/held_out_30_labels.py report CSV            # the ncu CSV -> table; exit 1 if inflated

The part runs `run` under ncu (GPU only) and `report` on its CSV. The ncu launches, in order: complex forward_scan, complex backward_scan ([1, C, T] complex64), then the scalar scan on the
same number of float32 values ([1, C, 2T]: the same bytes, unit-stride lanes) as the coalesced yardstick.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "audit_public_corpus" / "accelerated_scan"
C, T = 256, 65536  # 16.8M complex values: 134 MB a complex tensor, well past the 50 MB L2
LAUNCHES = ("complex forward", "complex backward", "scalar forward", "scalar backward")
# Bytes each launch must move at least: every tensor read or written once (complex64 8 B, float32 on 2T values 8 B
# a complex position): forward reads forget, inputs and writes states; backward reads forget, states, d_output and
# writes d_inputs, d_forget.
IDEAL = {"complex forward": (2, 1), "complex backward": (3, 2), "scalar forward": (2, 1), "scalar backward": (3, 2)}
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
           "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"scan_{name}", CORPUS / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run() -> int:
    import torch
    if not torch.cuda.is_available():
        print("held_out_30_labels: needs a GPU (ncu)")
        return 2
    cplx, scal = _load("complex"), _load("scalar")
    torch.manual_seed(0)
    f = torch.polar(0.99 * torch.ones(1, C, T, device="cuda"), 0.01 * torch.rand(1, C, T, device="cuda"))
    x = torch.complex(torch.randn(1, C, T, device="cuda"), torch.randn(1, C, T, device="cuda"))
    f.requires_grad_(), x.requires_grad_()
    cplx.scan(f, x).backward(torch.ones_like(x))
    fs = (0.999 * torch.ones(1, C, 2 * T, device="cuda")).requires_grad_()
    xs = torch.rand(1, C, 2 * T, device="cuda").requires_grad_()
    scal.scan(fs, xs).backward(torch.ones_like(xs))
    torch.cuda.synchronize()
    print("held_out_30_labels: ran 4 launches")
    return 0


def oob(name: str) -> int:
    """One forward + backward of scan `name` at the harness's [1, 4, 5000] and at [1, 512, 1024] (T below one block),
    checked against the float64 recurrence; memcheck (the part) says whether any access left its tensor."""
    import torch
    if not torch.cuda.is_available():
        print("held_out_30_labels: needs a GPU (compute-sanitizer)")
        return 2
    mod = _load(name)
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
        print(f"held_out_30_labels: oob {name} [{b}, {c}, {t}]: forward + backward ran, d_inputs finite and positive: "
              f"{bool(torch.isfinite(got).all() and (got > 0).all())}")
    torch.cuda.synchronize()
    return 0 if worst == 0 else 1


def report(path: str) -> int:
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
        print(f"held_out_30_labels: expected {len(LAUNCHES)} profiled launches, got {len(ids)}")
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
    print(f"held_out_30_labels: complex scan DRAM traffic at most {worst:.2f}x its ideal: inflated by the stride-2 "
          f"lanes: {verdict}")
    return 0 if worst <= 1.15 else 1


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        sys.exit(run())
    if len(sys.argv) == 3 and sys.argv[1] == "oob" and sys.argv[2] in ("scalar", "complex"):
        sys.exit(oob(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "report":
        sys.exit(report(sys.argv[2]))
    print(f"usage: {sys.argv[0]} oob scalar|complex | run | report CSV", file=sys.stderr)
    sys.exit(2)
