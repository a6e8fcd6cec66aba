"""Compiled-analysis facts from PTX and metadata (pure functions; the GPU run feeds them real kernels)."""

from __future__ import annotations

from pytorch_to_triton.worker.device.compiled import compiled_facts, findings_from_compiled, occupancy, ptx_facts

H200 = {"sm_count": 132, "regs_per_sm": 65536, "max_threads_per_sm": 2048, "smem_per_sm": 233472,
        "capability": "9.0"}
VEC_PTX = """
    ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
    ld.global.v4.b32 { %r5, %r6, %r7, %r8 }, [ %rd2 + 0 ];
    st.global.v4.b32 [ %rd3 + 0 ], { %r9, %r10, %r11, %r12 };
"""
SCALAR_PTX = "\n".join(f"    @%p{i} ld.global.b32 {{ %r{i} }}, [ %rd{i} + 0 ];" for i in range(6)) + \
    "\n    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};"


def test_ptx_counts() -> None:
    v = ptx_facts(VEC_PTX)
    assert (v["global_loads"], v["vectorized_loads"], v["global_stores"], v["vectorized_stores"]) == (2, 2, 1, 1)
    s = ptx_facts(SCALAR_PTX)
    assert (s["global_loads"], s["vectorized_loads"], s["mma"], s["wgmma"]) == (6, 0, 1, 0)


def test_occupancy_limits() -> None:
    # 255 registers x 256 threads: 65536 / (256 * 8 warps * 32) = 1 block -> 256 of 2048 threads.
    o = occupancy(255, 0, 8, H200)
    assert o["blocks_per_sm"] == 1 and o["limited_by"] == "registers" and o["occupancy"] == 0.125
    o = occupancy(32, 200_000, 4, H200)
    assert o["blocks_per_sm"] == 1 and o["limited_by"] == "shared_memory"
    o = occupancy(32, 0, 4, H200)
    assert o["blocks_per_sm"] == 16 and o["occupancy"] == 1.0


def test_findings_from_compiled() -> None:
    bad = compiled_facts("k", {"ptx": SCALAR_PTX}, {"n_regs": 255, "n_spills": 12, "num_warps": 16, "shared": 0}, H200)
    ids = {f["id"] for f in findings_from_compiled(bad)}
    assert ids == {"register_spills", "unvectorized_loads", "no_wgmma", "low_occupancy"}
    good = compiled_facts("k", {"ptx": VEC_PTX}, {"n_regs": 40, "n_spills": 0, "num_warps": 4, "shared": 0}, H200)
    assert findings_from_compiled(good) == []
