"""Facts about a compiled Triton kernel (GPU only): registers, spills, shared memory, occupancy, PTX shape.

Input is what Triton's CompiledKernel exposes (``asm`` texts and metadata); output is plain dicts so the
server side (audit.model.Finding) stays free of Triton imports.
"""

from __future__ import annotations

import re
from typing import Any

_VEC_LOAD = re.compile(r"\bld\.global(?:\.[a-z0-9]+)*\.v(2|4|8)\b")
_SCALAR_LOAD = re.compile(r"\bld\.global(?:\.[a-z0-9]+)*\.(?:b|u|s|f)(?:8|16|32|64)\b(?!\.v)")
_VEC_STORE = re.compile(r"\bst\.global(?:\.[a-z0-9]+)*\.v(2|4|8)\b")
_SCALAR_STORE = re.compile(r"\bst\.global(?:\.[a-z0-9]+)*\.(?:b|u|s|f)(?:8|16|32|64)\b")


def ptx_facts(ptx: str) -> dict[str, Any]:
    """Count vectorized vs scalar global accesses and the matrix instructions in a PTX listing."""
    vec_loads = len(_VEC_LOAD.findall(ptx))
    all_loads = len(re.findall(r"\bld\.global\b", ptx))
    vec_stores = len(_VEC_STORE.findall(ptx))
    all_stores = len(re.findall(r"\bst\.global\b", ptx))
    return {
        "global_loads": all_loads,
        "vectorized_loads": vec_loads,
        "global_stores": all_stores,
        "vectorized_stores": vec_stores,
        "tma_loads": len(re.findall(r"cp\.async\.bulk\.tensor", ptx)),
        "wgmma": len(re.findall(r"\bwgmma\.mma_async\b", ptx)),
        "mma": len(re.findall(r"\bmma\.sync\b", ptx)),
        "fma_f32": len(re.findall(r"\bfma\.rn\.f32\b", ptx)),
    }


def occupancy(regs: int | None, smem: int | None, num_warps: int | None, dev: dict[str, Any]) -> dict[str, Any]:
    """Resident blocks per SM and the fraction of the SM's warp slots they fill (CUDA occupancy rules)."""
    if not num_warps:
        return {}
    threads = 32 * num_warps
    max_threads = int(dev.get("max_threads_per_sm") or 2048)
    limits = {"threads": max_threads // threads}
    if regs:
        per_warp = ((regs * 32 + 255) // 256) * 256  # register allocation granularity: 256 per warp
        limits["registers"] = int(dev.get("regs_per_sm") or 65536) // (per_warp * num_warps)
    if smem:
        limits["shared_memory"] = int(dev.get("smem_per_sm") or 233472) // max(int(smem), 1)
    limits["hardware"] = 32
    blocks = max(0, min(limits.values()))
    limiter = min(limits, key=lambda k: limits[k])
    return {"blocks_per_sm": blocks, "occupancy": round(blocks * threads / max_threads, 3), "limited_by": limiter}


def compiled_facts(name: str, asm: dict[str, str], meta: dict[str, Any], dev: dict[str, Any]) -> dict[str, Any]:
    """One kernel's compiled summary: metadata, occupancy and PTX facts."""
    facts: dict[str, Any] = {"kernel": name, **{k: v for k, v in meta.items() if v is not None}}
    facts.update(occupancy(meta.get("n_regs"), meta.get("shared"), meta.get("num_warps"), dev))
    if asm.get("ptx"):
        facts.update(ptx_facts(asm["ptx"]))
    facts["capability"] = dev.get("capability")
    facts["has_sass"] = bool(asm.get("sass"))
    return facts


def _finding(fid: str, cat: str, sev: str, name: str, evidence: str, why: str, fix: str) -> dict[str, Any]:
    return {"id": fid, "category": cat, "severity": sev, "file": "", "line": 0, "function": name,
            "evidence": evidence, "why": why, "fix": fix, "snippet": ""}


def findings_from_compiled(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Performance findings that only the compiled kernel shows."""
    out: list[dict[str, Any]] = []
    name = facts.get("kernel", "?")
    if (facts.get("n_spills") or 0) > 0:
        out.append(_finding("register_spills", "performance", "P1", name,
                            f"{facts['n_spills']} spilled registers ({facts.get('n_regs')} regs/thread)",
                            "spills go to local memory (L1/L2/HBM) on every access",
                            "reduce BLOCK sizes or num_stages, or raise num_warps so each thread holds less"))
    occ = facts.get("occupancy")
    if occ is not None and occ < 0.125 and facts.get("limited_by") in ("registers", "shared_memory"):
        out.append(_finding("low_occupancy", "performance", "P1", name,
                            f"occupancy {occ:.0%} limited by {facts['limited_by']}",
                            "too few resident warps to hide memory latency",
                            "smaller tiles or fewer pipeline stages; check with the autotuner"))
    loads, vec = facts.get("global_loads", 0), facts.get("vectorized_loads", 0)
    if loads >= 4 and vec == 0 and not facts.get("tma_loads") and not facts.get("wgmma"):
        out.append(_finding("unvectorized_loads", "memory_access", "P1", name,
                            f"{loads} global loads in PTX, none vectorized (no ld.global.v2/v4)",
                            "scalar loads use a fraction of each memory transaction",
                            "make the contiguous dimension the fastest-varying one in tl.arange offsets, "
                            "pass strides of 1 as constexpr-friendly ints, and keep pointers 16-byte aligned"))
    cap = str(facts.get("capability") or "")
    if cap.startswith("9.") and facts.get("mma", 0) > 0 and facts.get("wgmma", 0) == 0:
        out.append(_finding("no_wgmma", "performance", "P1", name,
                            f"tl.dot lowered to mma.sync ({facts['mma']}) instead of Hopper's wgmma",
                            "mma.sync reaches a fraction of H100/H200 tensor-core throughput",
                            "use BLOCK_M >= 64 with num_warps a multiple of 4 and bf16/fp16 operands"))
    return out
