"""Peak memory bandwidth and tensor-core throughput of known GPUs, for the roofline ESTIMATE (no GPU needed).

Every figure is the vendor's datasheet number, dense (the datasheets' headline tensor figures assume 2:4 sparsity;
we halve them back), with the document it comes from. A datasheet peak is not reachable: our H200 measured a device
copy at 4222-4246 GB/s (88 % of 4800) and a bf16 8192^3 matmul at 685-702 TFLOP/s (69-71 % of 989), so the estimate
is a lower bound on time that ranks stages, not a prediction (benchmarks/RESULTS.md, Peaks).

Precision keys match worker/device/interp_traffic.dot_precision: tf32 (an fp32 tl.dot's default), tf32x3 (three TF32
dots), ieee (fp32 FMA, no tensor cores), bf16, fp16, fp8, int8. For fp32-input dots on Hopper (H200, H100) the rates
are the ones a Triton matmul reached on our H200 (`fp32_dot`), not datasheet figures: the datasheet ranks tf32x3
far ahead of ieee, the H200 ran it slower.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import UsageError


@dataclass(frozen=True)
class GPU:
    """One GPU's peaks: GB/s of DRAM, TFLOP/s (TOPS for int8) per tl.dot precision, and where they come from."""

    name: str
    bandwidth_gbs: float
    tflops: dict[str, float]
    source: str
    measured: str = ""
    aliases: tuple[str, ...] = field(default=())
    # TFLOP/s an fp32-input tl.dot reached on this architecture, per input_precision, counted once per tl.dot (so
    # tf32x3's three dots are inside the figure): datasheets say nothing of tf32x3 or ieee, and the ratio they imply
    # (tf32x3 = a third of tf32, far above ieee) was wrong on the H200, where tf32x3 ran slower than ieee.
    fp32_dot: dict[str, float] = field(default_factory=dict)
    fp32_dot_source: str = ""
    sms: int = 132  # streaming multiprocessors (the estimate's waves and parallelism: roofline_estimate.py)
    l2_mb: float = 50.0  # L2 cache (whether a program's rereads of its own data stay in it: roofline_estimate.py)

    def peak(self, precision: str) -> float:
        """TFLOP/s for a tl.dot precision (a precision the GPU lacks falls back to the next wider one)."""
        for key in {"fp8": ("fp8", "fp16"), "int8": ("int8", "fp16"), "bf16": ("bf16", "fp16"),
                    "tf32x3": ("tf32",), "ieee": ("fp32",)}.get(precision, (precision, "fp32")):
            if key in self.tflops:
                return self.tflops[key]
        return self.tflops["fp32"]

    def dot_rate(self, precision: str) -> tuple[float, float]:
        """(TFLOP/s, dots per tl.dot) to cost a tl.dot of this precision: the measured fp32-input rate where there
        is one (three-dot tf32x3 inside it), else the datasheet peak with tf32x3 as three TF32 dots."""
        if precision in self.fp32_dot:
            return self.fp32_dot[precision], 1.0
        return self.peak(precision), 3.0 if precision == "tf32x3" else 1.0


GPUS: tuple[GPU, ...] = (
    GPU("H200 SXM", 4800, {"fp32": 67, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "int8": 1978.9},
        "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; tensor figures halved from 'with sparsity')",
        measured="our H200: copy 4222-4246 GB/s, bf16 8192^3 matmul 685-702 TFLOP/s (benchmarks/RESULTS.md)",
        aliases=("h200", "h200-sxm", "h200sxm"),
        fp32_dot={"tf32": 82.1, "tf32x3": 35.5, "ieee": 42.3},
        fp32_dot_source=("a plain Triton 4096^3 fp32 matmul (128x128x32 tiles) on our H200, triton 3.6, 2026-12-04 "
                         "(benchmarks/RESULTS.md, issue 29 item 6): tf32 1.674 ms, tf32x3 3.870, ieee 3.251"),),
    GPU("H100 SXM", 3350, {"fp32": 67, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "int8": 1978.9},
        "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; tensor figures halved from 'with sparsity')",
        aliases=("h100", "h100-sxm", "h100sxm", "h100-80gb"),
        fp32_dot={"tf32": 82.1, "tf32x3": 35.5, "ieee": 42.3},
        fp32_dot_source=("a plain Triton 4096^3 fp32 matmul (128x128x32 tiles) on our H200 (the H100 SXM has the same SMs and clocks), triton 3.6, 2026-12-04 "
                         "(benchmarks/RESULTS.md, issue 29 item 6): tf32 1.674 ms, tf32x3 3.870, ieee 3.251"),),
    GPU("A100 80GB", 2039, {"fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column; dense figures; no FP8)",
        aliases=("a100", "a100-80gb", "a100-sxm", "a100sxm"), sms=108, l2_mb=40),
    GPU("L4", 300, {"fp32": 30.3, "tf32": 60, "bf16": 121, "fp16": 121, "fp8": 242.5, "int8": 242.5},
        "NVIDIA L4 Tensor Core GPU datasheet (tensor figures halved from 'with sparsity')",
        aliases=("l4",), sms=58, l2_mb=48),
    GPU("RTX 4090", 1008, {"fp32": 82.6, "tf32": 82.6, "bf16": 165.2, "fp16": 165.2, "fp8": 330.3, "int8": 660.6},
        "NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090 column (dense; FP16/BF16/FP8 with FP32 "
        "accumulate, as tl.dot accumulates)",
        aliases=("rtx4090", "rtx-4090", "4090", "geforce-rtx-4090"), sms=128, l2_mb=72),
)
DEFAULT = "H200 SXM"
_CUSTOM = re.compile(r"^\s*([^:]+):(.*)$")


def _norm(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def known() -> str:
    """The names --gpu accepts, for messages."""
    return ", ".join(g.name for g in GPUS)


def lookup(name: str | None) -> GPU:
    """A GPU by name or alias (case-insensitive), or a custom one: 'MyGPU:bw=2000,bf16=400,tf32=200,fp32=40'."""
    if not name:
        return next(g for g in GPUS if g.name == DEFAULT)
    key = _norm(name)
    for g in GPUS:
        if key == _norm(g.name) or key in g.aliases:
            return g
    m = _CUSTOM.match(name)
    if m and "=" in m.group(2):
        vals: dict[str, float] = {}
        for item in m.group(2).split(","):
            k, _, v = item.partition("=")
            try:
                vals[k.strip().lower()] = float(v)
            except ValueError:
                raise UsageError(f"gpu {name!r}: {item!r} is not key=number") from None
        if "bw" not in vals or "fp32" not in vals:
            raise UsageError(f"gpu {name!r}: a custom GPU needs at least bw (GB/s) and fp32 (TFLOP/s), e.g. "
                             "'MyGPU:bw=2000,fp32=40,tf32=200,bf16=400'")
        bw = vals.pop("bw")
        sms = int(vals.pop("sms", 132))
        return GPU(m.group(1).strip(), bw, vals, "given by the user", sms=sms)
    raise UsageError(f"unknown gpu {name!r}; use one of {known()}, or describe yours as "
                     "'NAME:bw=GB/s,fp32=TFLOP/s,tf32=...,bf16=...'")
