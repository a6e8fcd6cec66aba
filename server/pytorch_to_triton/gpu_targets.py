"""Target GPUs for the CPU-side compile (issue 36): names and limits per compute capability, and the one parser.

Used by the server (checks `target_gpus` / `--gpu` / the sidecar's `target_gpus` before a worker starts) and by the
worker (worker/device/target_compile.py). Imports nothing heavy: the server never imports torch or triton.
"""

from __future__ import annotations

from typing import Any

DEFAULT = (90,)
# Per compute capability: max dynamic shared memory per block (opt-in), shared memory and threads per SM (CUDA
# programming guide, "Technical Specifications per Compute Capability"); 64 K registers per SM on all of them.
SMEM_PER_BLOCK = {80: 166912, 86: 101376, 89: 101376, 90: 232448, 100: 232448, 120: 101376}
SMEM_PER_SM = {80: 167936, 86: 102400, 89: 102400, 90: 233472, 100: 233472, 120: 102400}
THREADS_PER_SM = {80: 2048, 86: 1536, 89: 1536, 90: 2048, 100: 2048, 120: 1536}
REGS_PER_SM = 65536
NAMES = {"h200": 90, "h100": 90, "gh200": 90, "a100": 80, "a10": 86, "rtx 3090": 86, "l4": 89, "l40s": 89,
         "rtx 4090": 89, "4090": 89, "b200": 100, "gb200": 100, "rtx 5090": 120, "5090": 120}
OFF = ("none", "off", "false", "0", "cpu")


def parse(value: Any) -> list[int]:
    """Compute capabilities from 90, "sm_90", "9.0", "H100", "sm_90,sm_100" or a list of those; [] for "none";
    the default (sm_90) for None. ValueError names what is accepted."""
    if value is None or value == "" or value == []:
        return list(DEFAULT)
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    out: list[int] = []
    for it in items:
        s = str(it).strip().lower()
        if s in OFF:
            return []
        if s in NAMES:
            out.append(NAMES[s])
            continue
        s = s.removeprefix("sm_").removeprefix("sm")
        try:
            cc = round(float(s) * 10) if "." in s else int(s)
        except ValueError:
            cc = -1
        if cc not in SMEM_PER_BLOCK:
            raise ValueError(f"unknown target GPU {it!r}: use sm_80, sm_86, sm_89, sm_90, sm_100 or sm_120, a GPU name "
                             f"({', '.join(sorted(n for n in NAMES if ' ' not in n))}), or 'none' to skip the compile")
        out.append(cc)
    return list(dict.fromkeys(out))


def config_table(sections: list[tuple[str, dict[str, Any] | None]]) -> list[str]:
    """Every config of every launch compiled for the target GPU on this CPU (a target_compile section per stage), in
    one markdown table: registers, spills, shared memory, occupancy; a config left at Triton's frontend or refused
    by the compiler says so. [] when nothing was compiled."""
    out = ["| stage | kernel | config | target | registers | spills | shared B | occupancy |",
           "|---|---|---|---|---|---|---|---|"]
    for stage, section in sections:
        section = section or {}
        if section.get("error"):
            out.append(f"| {stage} | – | no compile for the GPU: {str(section['error'])[:100]} | | | | | |")
            continue
        for r in section.get("rows") or []:
            size = " (full size)" if r.get("full_size") else ""
            head = f"| {stage} | {r['kernel']}{size} | {str(r['config'])[:70]} | {r['target']} |"
            if not r.get("ok"):
                out.append(f"{head} compile error | | | |")
            elif r.get("level") == "front":
                out.append(f"{head} frontend only | | | |")
            else:
                occ = f"{r['occupancy']:.0%} ({r.get('limited_by')})" if r.get("occupancy") is not None else "–"
                out.append(f"{head} {r.get('n_regs')} | {r.get('n_spills')} | {r.get('shared')} | {occ} |")
    return out if len(out) > 2 else []
