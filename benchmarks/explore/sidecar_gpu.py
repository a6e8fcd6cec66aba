"""The task sidecar and `new` on a GPU (issue 18 items 1, 5): what the CPU tests cannot reach.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/explore/sidecar_gpu.py

In a temporary workspace: scaffold a KernelBench-form problem (relu(x) * alpha, 4096 x 16384 fp32) and a user's
nn.Module (tests/scaffold_fixtures/mypkg, Scale, 4096 x 4096) with `new`, fill stage1.py with a Triton kernel,
write a sidecar ([[cases]] with sizes, [bench] bytes/flops formulas), then through one Service:
run_validation at full size (the sidecar's case must run), run_benchmark (the roofline must use the sidecar's
formulas: GB/s = bytes / median), and the journal report. About 1-3 minutes on an H200. JSON goes to $OUT.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton import journal, scaffold  # noqa: E402
from pytorch_to_triton.errors import UsageError  # noqa: E402
from pytorch_to_triton.service import Service  # noqa: E402

# The same filling as tests/test_scaffold.py (not imported: the GPU machine need not have pytest).
KB_KERNEL = ("def kb_scaled_relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
             "def kb_scaled_relu_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):")
KB_STORE = ("    tl.store(out_ptr + offsets, x, mask=mask)",
            "    tl.store(out_ptr + offsets, tl.where(x < 0, 0.0, x) * alpha, mask=mask)")
KB_LAUNCH = """        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        kb_scaled_relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, self.alpha, BLOCK_SIZE=1024)
        return out"""


def _fill(path: Path, launch: str, *pairs: tuple[str, str]) -> None:
    text = path.read_text()
    stub = next(ln for ln in text.splitlines() if "raise NotImplementedError" in ln)
    text = text.replace(stub, launch)
    for old, new in pairs:
        text = text.replace(old, new)
    path.write_text(text)

FIX = ROOT / "tests" / "scaffold_fixtures"
SIDECAR = '''notes = "GPU check of the sidecar: rows independent, alpha > 0"
[[cases]]
name = "side_odd"
sizes = { batch_size = 7, dim = 1000 }
[bench]
bytes = "2 * 4 * batch_size * dim"
flops = "2 * batch_size * dim"
'''
SCALE_LAUNCH = """        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        shift = (idx.to(x.dtype) * 0.5).contiguous()
        scale_kernel[(triton.cdiv(n, 1024),)](x, self.w, shift, out, n, x.shape[-1], BLOCK_SIZE=1024)
        return out"""
SCALE_PAIRS = (("def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
                "def scale_kernel(x_ptr, w_ptr, s_ptr, out_ptr, n_elements, dim, BLOCK_SIZE: tl.constexpr):"),
               ("    tl.store(out_ptr + offsets, x, mask=mask)",
                "    w = tl.load(w_ptr + offsets % dim, mask=mask)\n    s = tl.load(s_ptr + offsets // dim, mask=mask)\n"
                "    tl.store(out_ptr + offsets, x * w + s, mask=mask)"))


def main() -> int:
    out_dir = Path(os.environ.get("OUT") or "/tmp/out")
    out_dir.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="p2t-sidecar-"))
    text = (FIX / "kb_scaled_relu.py").read_text().replace("batch_size = 4\n", "batch_size = 4096\n")
    (ws / "kb_scaled_relu.py").write_text(text.replace("dim = 300\n", "dim = 16384\n"))
    shutil.copytree(FIX / "mypkg", ws / "src" / "mypkg")
    rows: list[tuple[str, str, str]] = []
    data: dict = {}
    t0 = time.time()
    scaffold.scaffold("kb_scaled_relu.py", "relu", root=ws)
    _fill(ws / "relu" / "stage1.py", KB_LAUNCH, KB_KERNEL, KB_STORE)
    (ws / "relu" / "reference.p2t.toml").write_text(SIDECAR)
    scaffold.scaffold("src/mypkg/layers.py:Scale", "scale", root=ws, init="dim=dim",
                      inputs="x=float32[batch=4096,dim=4096]; idx=int64[batch](0,9)")
    _fill(ws / "scale" / "stage1.py", SCALE_LAUNCH, *SCALE_PAIRS)
    svc = Service(ws)
    try:
        v = svc.validate(reference="relu/reference.py", candidates=["relu/stage1.py"], trials=1)
        names = [c.name for c in v.candidates[0].cases]
        data["relu_validation"] = v.model_dump(mode="json")
        rows.append(("relu validate (full size, GPU)", "PASS" if v.ok else "FAIL", f"{v.device}; cases {names}"))
        rows.append(("sidecar case side_odd ran", str(any("side_odd" in n for n in names)), ""))
        s = svc.validate(reference="scale/reference.py", candidates=["scale/stage1.py"], trials=1)
        data["scale_validation"] = s.model_dump(mode="json")
        rows.append(("model.py:Scale validate", "PASS" if s.ok else "FAIL", s.summary.splitlines()[0][:90]))
        try:
            b = svc.benchmark(reference="relu/reference.py", candidates=["relu/stage1.py"], repeats=2)
        except UsageError as e:  # no GPU: the rows above still tell
            rows.append(("bench refused", "", str(e)[:100]))
            b = None
        data["relu_benchmark"] = b.model_dump(mode="json") if b else None
        for t in b.timings if b else []:
            expect = 2 * 4 * 4096 * 16384 / (t.median_ms * 1e-3) / 1e9 if t.median_ms else None
            rows.append((f"bench {t.impl}", f"{t.median_ms or float('nan'):.4f} ms",
                         f"GB/s {t.gbps} (sidecar bytes -> {expect and round(expect, 1)}), TFLOP/s {t.tflops}, "
                         f"%BW {t.pct_peak_bw}, suspect {t.suspect}"))
        rows.append(("bench notes", "", " | ".join(n for n in (b.notes if b else []) if "sidecar" in n)[:160]))
        report = journal.render_report(ws, "relu")
        data["journal"] = report
        rows.append(("journal rows", "", " / ".join(x for x in report.splitlines() if x.startswith("| stage"))[:160]))
    finally:
        svc.close()
    data["wall_s"] = round(time.time() - t0, 1)
    (out_dir / "sidecar_gpu.json").write_text(json.dumps(data, indent=2, default=str))
    print(f"\nsidecar_gpu: {data['wall_s']} s, workspace {ws}")
    for what, verdict, detail in rows:
        print(f"{what:<34} {verdict:<12} {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
