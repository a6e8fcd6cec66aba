"""Stage 3: the Triton tutorial 06 structure for Hopper, forward and backward, causal and non-causal.

Forward: an unmasked loop over the key blocks that need no mask (left of the diagonal when causal, every full
block when not), then a masked pass over the diagonal block (causal) or the partial tail block (non-causal);
the longest causal rows launched first; the row log-sum-exp (base 2) is saved for backward.
Backward: delta = rowsum(o * do) in a small kernel, then one kernel for dK/dV (a program per key block walks
the query blocks at and below the diagonal) and one for dQ (a program per query block walks the key blocks up
to the diagonal); the causal mask is applied on the diagonal blocks only.

Which forward kernel runs for a (causal, D) is one table, FWD_PLANS (a FwdPlan each): the pointer kernel, the
same tile as two independent 64-row halves ("split"), or a Hopper forward with TMA descriptors (4-D over
(B, H, S, D), so tail tiles stay in their head; or the tutorial's 2-D ones where S % BLOCK_M == 0), optional warp
specialization (Triton's Hopper pass acts on num_warps=4 and makes it a TMA producer warpgroup plus two consumer
warpgroups; it accepts only one key loop, so a specialized causal tile masks every block) and a persistent grid
("tma"; never under the interpreter, and falling back to the pointer kernel where TMA cannot run). The backward is
the table BWD_PLANS (a BwdPlan each): the pointer kernels, or dK/dV on in-kernel descriptors, warp-specialized or
with dQ fused in through atomics ("tma", falling back likewise). Either plan can move part of its exponentials
from the MUFU unit to the FMA units (emul, _exp2), and the forward's pointer kernels can rescale their running sums
lazily (lazy, _lazy_rescale). The tables hold what a GPU sweep (benchmarks/attention_sweep.py) measured
fastest.

Assumes D (head_dim) is a power of 2 in [16, 256]: tl.dot needs tile sides >= 16 and tl.arange powers of 2.
`attention(q, k, v)` is causal (the reference); `attention(q, k, v, causal=False)` and `attention_noncausal`
(validated against reference_noncausal.py) are not.
"""

import math
import os
from typing import NamedTuple

import torch
import triton
import triton.language as tl

# The CPU interpreter's tl.dot multiplies bf16 as raw bit patterns; under TRITON_INTERPRET=1 tiles go through
# fp32.
_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
LOG2E = 1.4426950408889634
# Largest block side of the autotuned lists: S % MAX_BLOCK == 0 lets every kernel drop its sequence-bound masks
# (an explicit plan uses its own blocks, see _even).
MAX_BLOCK = 128

# Config lists, autotuned for head dims without a plan below. Forward entries are (BLOCK_M, BLOCK_N, num_warps,
# num_stages) with BLOCK_M a multiple of BLOCK_N (the causal diagonal pass covers exactly one BLOCK_M of keys).
# 128-row query tiles with 8 warps (two warpgroups of wgmma) are the tutorial's best on H100 for D=128.
FWD_CONFIGS = [(128, 64, 8, 3), (128, 64, 8, 4), (128, 128, 8, 3), (128, 64, 4, 3), (64, 64, 4, 3)]
# dK/dV: (BLOCK_M, BLOCK_N, num_warps, num_stages); a program owns BLOCK_N keys and walks BLOCK_M queries at a
# time; BLOCK_N a multiple of BLOCK_M (the causal diagonal band is BLOCK_N queries).
DKDV_CONFIGS = [(32, 128, 4, 5), (64, 128, 8, 3), (32, 64, 4, 5), (64, 64, 4, 3)]
# dQ: (BLOCK_M, BLOCK_N, num_warps, num_stages); a program owns BLOCK_M queries and walks BLOCK_N keys at a
# time; BLOCK_M a multiple of BLOCK_N.
DQ_CONFIGS = [(128, 32, 4, 5), (128, 64, 8, 3), (64, 32, 4, 5), (64, 64, 4, 3)]
# Under the interpreter one small config each, so CPU validation stays quick.
_INTERP_FWD, _INTERP_DKDV, _INTERP_DQ = (64, 32, 4, 1), (32, 64, 4, 1), (64, 32, 4, 1)


class FwdPlan(NamedTuple):
    """How the forward runs for one (causal, D): which kernel, its tile and launch parameters.

    kind "ptr": attention_fwd_kernel (pointer loads); "split": attention_fwd_split_kernel (the BLOCK_M query rows
    as two independent halves sharing each K/V block); "tma": attention_fwd_tma_kernel (TMA descriptors: desc
    "2d"/"4d", ws = warp-specialized key loop, device_desc = descriptors built in the kernel, persistent = programs
    per SM, 0 for one program per tile). maxnreg caps registers per thread (ptxas .maxnreg), None leaves it free.
    emul: 0, or 2, 4, 8: one probability exponential in every `emul` computed by a cubic polynomial on the FMA
    units instead of the MUFU ex2 unit (FlashAttention 4's trick; see _exp2), for every kind.
    lazy: 0, or a threshold in log2 units (FlashAttention 4 uses 8): rescale the running sums only when a row max
    grew by more than that (_lazy_rescale); "ptr" and "split" only (a runtime branch per block).
    """

    kind: str
    block_m: int
    block_n: int
    warps: int
    stages: int
    desc: str = "2d"
    ws: bool = False
    device_desc: bool = False
    persistent: int = 0
    maxnreg: int | None = None
    emul: int = 0
    lazy: float = 0.0

    @property
    def config(self) -> tuple[int, int, int, int]:
        """(BLOCK_M, BLOCK_N, num_warps, num_stages)."""
        return self.block_m, self.block_n, self.warps, self.stages


# The plans the gallery runs, per (causal, D) (B4 H32 S4096 bf16, torch 2.11, triton 3.6). THIS is the table a
# sweep's winner goes into: benchmarks/attention_sweep.py prints its best row per (causal, D) in this form.
# Round 4 (H100, 2026-12-07, PART=attn; SDPA/cuDNN 0.921 / 0.628 / 1.608 / 1.121 ms): fwd 1.149 / 0.665 / 1.928 /
# 1.164 ms for the four rows below, the first three adopted from that sweep (non-causal D64's "adopt" line,
# 1.1588 vs 1.1644 ms, is within run-to-run noise and was left). Round 5 (H100, 2026-12-07 10:15 UTC; SDPA 1.012 /
# 0.628 / 1.804 / 1.132 ms): causal D64 adopted (0.685 vs 0.708 ms). (causal, D) pairs not listed autotune over
# FWD_CONFIGS. A "tma" plan falls back to PTR_FALLBACK where TMA cannot run (the interpreter, a GPU below compute
# capability 9, unaligned or strided tensors, "2d" with S % BLOCK_M != 0).
FWD_PLANS: dict[tuple[bool, int], FwdPlan] = {
    (True, 128): FwdPlan("ptr", 128, 64, 8, 2, maxnreg=128),
    (True, 64): FwdPlan("ptr", 128, 64, 8, 4),
    (False, 128): FwdPlan("split", 128, 64, 4, 2),
    (False, 64): FwdPlan("ptr", 128, 64, 8, 4),
}
PTR_FALLBACK = {128: FwdPlan("ptr", 128, 128, 8, 3), 64: FwdPlan("ptr", 128, 64, 8, 3)}


class BwdPlan(NamedTuple):
    """How the backward runs for one (causal, D).

    dkdv, dq: (BLOCK_M, BLOCK_N, num_warps, num_stages) of the dK/dV and the dQ kernel. kind "ptr": both on pointer
    loads; "tma": dK/dV in attention_bwd_dkdv_tma_kernel (in-kernel descriptors; ws = its loop warp-specialized;
    fused_dq = dQ added there into fp32, no dQ kernel: 1 through TMA reduces, 2 through vector atomics; the
    interpreter has no descriptor reduce and runs 1 as 2), the dQ kernel on pointer loads, or, dq_ws, on
    descriptors with its key loop warp-specialized (attention_bwd_dq_tma_kernel). emul: as FwdPlan's, for the
    exponentials of both kernels.
    """

    dkdv: tuple[int, int, int, int]
    dq: tuple[int, int, int, int]
    kind: str = "ptr"
    ws: bool = False
    fused_dq: int = 0
    dq_ws: bool = False
    emul: int = 0


# Backward per (causal, D), launched directly (no autotuning: its one-shot timing picked a slower forward than the
# sweep, 0.751 vs 0.697 ms causal D64). Round 4 (H100, 2026-12-07, PART=attn): bwd 3.631 / 1.924 / 6.552 /
# 3.537 ms with these pairs (the causal ones adopted from that sweep). Round 5 (10:15 UTC): causal D128 adopted,
# both loops warp-specialized (3.758 vs 3.993 ms; SDPA's backward 3.008 ms by difference). A "tma" plan falls back to
# BWD_PTR_FALLBACK where it cannot run (bwd_tma_refusal).
BWD_PLANS: dict[tuple[bool, int], BwdPlan] = {
    (True, 128): BwdPlan((64, 128, 4, 2), (128, 64, 4, 2), kind="tma", ws=True, dq_ws=True),
    (True, 64): BwdPlan((32, 64, 4, 4), (128, 64, 8, 4)),
    (False, 128): BwdPlan((64, 128, 8, 3), (128, 64, 8, 3)),
    (False, 64): BwdPlan((64, 64, 4, 3), (128, 64, 8, 3)),
}
BWD_PTR_FALLBACK = {128: BwdPlan((32, 64, 4, 4), (128, 64, 8, 4)), 64: BwdPlan((32, 64, 4, 4), (128, 64, 8, 4))}
# Set by every forward launch that takes a plan: the compiled kernel (registers, spills, its TTGIR), for
# benchmarks that report what the compiler did (a warp-specialized loop shows as ttg.warp_specialize). Not read
# by the kernels' own path.
LAST_COMPILED = None
LAST_COMPILED_BWD = None  # the same for a "tma" backward's dK/dV kernel


def _even(S: int, plan: tuple | None) -> bool:
    """S a multiple of every block side a launch at `plan` ((BLOCK_M, BLOCK_N, ...) or None: the autotuned
    lists) uses, so no sequence-bound mask is needed."""
    return S % (MAX_BLOCK if plan is None else max(plan[0], plan[1])) == 0


def _config(entry: tuple[int, int, int, int]) -> triton.Config:
    block_m, block_n, warps, stages = entry
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n}, num_warps=warps, num_stages=stages)


def _configs(entries: list[tuple[int, int, int, int]], interp: tuple[int, int, int, int]) -> list[triton.Config]:
    return [_config(interp)] if _INTERPRET else [_config(e) for e in entries]


# ---------------------------------------------------------------------------------------------- exp2
# The H100's special-function unit computes 16 exponentials per clock per SM against 4096 bf16 tensor-core FLOPs:
# at D=64 a score's exp2 costs as long as its 4*64 matmul FLOPs, so a forward that keeps every exp2 on that unit
# runs at half the tensor-core peak at best (494 TFLOP/s; cuDNN's non-causal D64 forward ran at 486 on the H100,
# 2026-12-07), and at D=128 the exp2s are half of the matmul time. FlashAttention 4 moves part of them to the FMA
# units as 2^x = 2^floor(x) * p(x - floor(x)), p a cubic (relative error 8.8e-5, far under bf16's 3.9e-3: P
# is rounded to bf16 for the PV matmul anyway). Which elements take the polynomial must cost nothing to choose:
# inline PTX over `pack` consecutive registers of a thread (no layout change) computes the first of each pack with
# the polynomial and the rest with ex2.approx. Inputs are x = score - row max <= 0; x < -127 clamps to 2^-127 = 0.
_EXP2_POLY = (1.0, 0.695146143436431884765625, 0.227564394474029541015625, 0.077119089663028717041015625)


def _exp2_asm(pack: int) -> str:
    """PTX for tl.inline_asm_elementwise(pack=pack): outputs $0..$(pack-1), inputs $pack..; element 0 on the FMA
    units (floor through an add rounding toward -inf against 1.5 * 2^23, whose low mantissa bits then hold
    floor(x); the exponent added as an integer), the others on ex2.approx."""
    lines = ["{", ".reg .f32 %e2x, %e2r, %e2b, %e2f, %e2p;", ".reg .b32 %e2i, %e2j;"]
    lines += [f"ex2.approx.ftz.f32 ${i}, ${pack + i};" for i in range(1, pack)]
    lines += [f"max.ftz.f32 %e2x, ${pack}, 0fC2FE0000;",  # -127
              "add.rm.ftz.f32 %e2r, %e2x, 0f4B400000;",  # + 1.5 * 2^23, rounded down: floor(x) in the low bits
              "sub.ftz.f32 %e2b, %e2r, 0f4B400000;",  # floor(x), exactly
              "sub.ftz.f32 %e2f, %e2x, %e2b;",  # the fraction, in [0, 1)
              "fma.rn.ftz.f32 %e2p, %e2f, 0f3D9DF09D, 0f3E6906A4;",  # the cubic of _EXP2_POLY, Horner
              "fma.rn.ftz.f32 %e2p, %e2p, %e2f, 0f3F31F519;",
              "fma.rn.ftz.f32 %e2p, %e2p, %e2f, 0f3F800000;",
              "mov.b32 %e2i, %e2r;",
              "shl.b32 %e2i, %e2i, 23;",  # floor(x) << 23 (the 1.5 * 2^23 bits shift out)
              "mov.b32 %e2j, %e2p;",
              "add.s32 %e2j, %e2j, %e2i;",  # p * 2^floor(x): the exponent field moved by floor(x)
              "mov.b32 $0, %e2j;", "}"]
    return "\n".join(lines)


_EXP2_ASM_2: tl.constexpr = tl.constexpr(_exp2_asm(2))
_EXP2_ASM_4: tl.constexpr = tl.constexpr(_exp2_asm(4))
_EXP2_ASM_8: tl.constexpr = tl.constexpr(_exp2_asm(8))


@triton.jit
def _exp2_poly(x):
    """2^x for x <= 0 on the FMA units, every element (what _exp2_asm's polynomial lane computes, in plain Triton:
    the interpreter runs no inline PTX)."""
    x = tl.maximum(x, -127.0)
    xf = tl.floor(x)
    f = x - xf
    p = 1.0 + f * (0.695146143436431884765625 + f * (0.227564394474029541015625 + f * 0.077119089663028717041015625))
    bits = p.to(tl.int32, bitcast=True) + (xf.to(tl.int32) << 23)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _exp2(x, EMUL: tl.constexpr):
    """2^x of the probabilities: EMUL 0 all on ex2.approx; 2, 4, 8: one element in every EMUL through the
    polynomial (_exp2_asm); -1: every element through _exp2_poly (the interpreter's stand-in for 2, 4, 8)."""
    if EMUL == 0:
        y = tl.exp2(x)
    elif EMUL == -1:
        y = _exp2_poly(x)
    elif EMUL == 2:
        y = tl.inline_asm_elementwise(_EXP2_ASM_2, "=f,=f,f,f", [x], dtype=tl.float32, is_pure=True, pack=2)
    elif EMUL == 4:
        y = tl.inline_asm_elementwise(_EXP2_ASM_4, "=f,=f,=f,=f,f,f,f,f", [x], dtype=tl.float32, is_pure=True,
                                      pack=4)
    else:
        tl.static_assert(EMUL == 8)
        y = tl.inline_asm_elementwise(_EXP2_ASM_8, "=f,=f,=f,=f,=f,=f,=f,=f,f,f,f,f,f,f,f,f", [x], dtype=tl.float32,
                                      is_pure=True, pack=8)
    return y


# ---------------------------------------------------------------------------------------------- forward
@triton.jit
def _lazy_rescale(m_i, m_new, l_i, acc, LAZY_TAU: tl.constexpr):
    """FlashAttention 4's lazy rescaling: the running sums move to a new row max only when some row's max grew by
    more than LAZY_TAU (log2 units) in this block; otherwise the probabilities stay referenced to the old max, so
    they reach at most 2^LAZY_TAU (fp32 sums, bf16 P: no range problem) and o = acc / l and lse = m + log2(l) stay
    exact. Saves the acc * alpha multiplies (D / BLOCK_N per score: 2 at D128, BLOCK_N 64) on nearly every block
    (with N(0, 1) scores the max settles within the first blocks), for a CTA-wide max per block (a runtime `if`:
    never inside a warp-specialized loop, which it would unspecialize). Returns the reference max, l, acc."""
    if tl.max(m_new - m_i, axis=0) > LAZY_TAU:  # the first block always (m_i = -inf)
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha
        acc = acc * alpha[:, None]
        m_i = m_new
    return m_i, l_i, acc


@triton.jit
def _fwd_inner(
    acc,
    l_i,
    m_i,
    q,
    k_ptr,
    v_ptr,
    stride_ks,
    stride_kd,
    stride_vs,
    stride_vd,
    offs_m,
    offs_n,
    offs_d,
    lo,
    hi,
    S,
    qk_scale,
    BLOCK_N: tl.constexpr,
    MASK: tl.constexpr,  # 0: none, 1: causal diagonal (and the sequence end), 2: the sequence end only
    UPCAST_DOT: tl.constexpr,
    EXP2_EMUL: tl.constexpr,
    LAZY_TAU: tl.constexpr,
):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_ptr + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd
        v_ptrs = v_ptr + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd
        if MASK != 0:
            k = tl.load(k_ptrs, mask=cols[None, :] < S, other=0.0)
            v = tl.load(v_ptrs, mask=cols[:, None] < S, other=0.0)
        else:  # every key of these blocks exists and is visible: no masks, no selects
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
        if UPCAST_DOT:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k)
        if MASK != 0:
            if MASK == 1:
                keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
            else:
                keep = cols[None, :] < S
            qk = tl.where(keep, qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        else:
            # Scale after the max (max(c * x) = c * max(x) for c > 0): the scale and the subtraction fuse into
            # one FMA per score.
            m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        if LAZY_TAU > 0:
            m_new, l_i, acc = _lazy_rescale(m_i, m_new, l_i, acc, LAZY_TAU)
            m_i = m_new
        if MASK != 0:
            qk = qk - m_new[:, None]
        else:
            qk = qk * qk_scale - m_new[:, None]
        p = _exp2(qk, EXP2_EMUL)
        if LAZY_TAU > 0:
            l_i = l_i + tl.sum(p, axis=1)
        else:
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None]
            m_i = m_new
        acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_i


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    lse_ptr,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_vd,
    stride_ob,
    stride_oh,
    stride_os,
    stride_od,
    H,
    S,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    EVEN_S: tl.constexpr,
    STORE_LSE: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EXP2_EMUL: tl.constexpr = 0,
    LAZY_TAU: tl.constexpr = 0.0,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    if CAUSAL:
        # Last query blocks first: they have the most key blocks, and starting them early stops them from
        # being the tail of the launch while the short first rows leave SMs idle.
        start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    q_ptr += off_b * stride_qb + off_h * stride_qh
    k_ptr += off_b * stride_kb + off_h * stride_kh
    v_ptr += off_b * stride_vb + off_h * stride_vh
    o_ptr += off_b * stride_ob + off_h * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    if EVEN_S:
        q = tl.load(q_ptrs)
    else:
        q = tl.load(q_ptrs, mask=offs_m[:, None] < S, other=0.0)
    if UPCAST_DOT:
        q = q.to(tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        # Off-diagonal: keys [0, start_m * BLOCK_M) are all < S and all visible to every query row of the block.
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                                   offs_m, offs_n, offs_d, 0, start_m * BLOCK_M, S, qk_scale,
                                   BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL,
                                   LAZY_TAU=LAZY_TAU)
        # Diagonal: the one BLOCK_M-wide band where the causal mask and the end of the sequence cut in. Its
        # first key block holds key start_m * BLOCK_M <= every query row, so m_i is finite before any fully
        # masked row.
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                                   offs_m, offs_n, offs_d, start_m * BLOCK_M,
                                   tl.minimum((start_m + 1) * BLOCK_M, S), S, qk_scale,
                                   BLOCK_N=BLOCK_N, MASK=1, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL,
                                   LAZY_TAU=LAZY_TAU)
    else:
        if EVEN_S:
            full = S
        else:
            full = (S // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                                   offs_m, offs_n, offs_d, 0, full, S, qk_scale,
                                   BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL,
                                   LAZY_TAU=LAZY_TAU)
        if not EVEN_S:  # the partial last key block; when S < BLOCK_N it is the only one
            acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs,
                                       stride_vd, offs_m, offs_n, offs_d, full, S, S, qk_scale,
                                       BLOCK_N=BLOCK_N, MASK=2, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL,
                                       LAZY_TAU=LAZY_TAU)
    acc = acc / l_i[:, None]
    o_ptrs = o_ptr + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    if EVEN_S:
        tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty))
    else:
        tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)
    if STORE_LSE:
        # Base-2 log-sum-exp of the scaled scores: backward rebuilds p = exp2(qk * qk_scale - lse).
        lse_ptrs = lse_ptr + off_bh.to(tl.int64) * S + offs_m
        if EVEN_S:
            tl.store(lse_ptrs, m_i + tl.log2(l_i))
        else:
            tl.store(lse_ptrs, m_i + tl.log2(l_i), mask=offs_m < S)


# ------------------------------------------------------------------------------- forward, two halves per tile
# FA3 gives each of two consumer warpgroups 64 query rows and lets one's softmax run while the other's GEMMs use
# the tensor cores. Triton has no warpgroup ping-pong, but a program can carry two independent 64-row chains:
# each K/V block is loaded once for BLOCK_M rows (as in the plain kernel), and the two halves' QK^T, softmax and
# PV have no dependence on each other, which leaves the scheduler work to overlap with the other half's exp2.
@triton.jit
def _softmax_step(qk, m_i, l_i, acc, offs_m, cols, S, qk_scale, MASK: tl.constexpr, EXP2_EMUL: tl.constexpr,
                  LAZY_TAU: tl.constexpr):
    """One score block of one half: new running max, probabilities (exp2, scale folded), rescaled sums."""
    if MASK != 0:
        if MASK == 1:
            keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
        else:
            keep = cols[None, :] < S
        qk = tl.where(keep, qk * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
    else:
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
    if LAZY_TAU > 0:
        m_new, l_i, acc = _lazy_rescale(m_i, m_new, l_i, acc, LAZY_TAU)
    if MASK != 0:
        qk = qk - m_new[:, None]
    else:
        qk = qk * qk_scale - m_new[:, None]
    p = _exp2(qk, EXP2_EMUL)
    if LAZY_TAU > 0:
        return p, m_new, l_i + tl.sum(p, axis=1), acc
    alpha = tl.exp2(m_i - m_new)
    return p, m_new, l_i * alpha + tl.sum(p, axis=1), acc * alpha[:, None]


@triton.jit
def _fwd_inner_halves(acc0, l0, m0, acc1, l1, m1, q0, q1, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                      offs_m0, offs_m1, offs_n, offs_d, lo, hi, S, qk_scale, BLOCK_N: tl.constexpr,
                      MASK: tl.constexpr, UPCAST_DOT: tl.constexpr, EXP2_EMUL: tl.constexpr,
                      LAZY_TAU: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_ptr + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd
        v_ptrs = v_ptr + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd
        if MASK != 0:
            k = tl.load(k_ptrs, mask=cols[None, :] < S, other=0.0)
            v = tl.load(v_ptrs, mask=cols[:, None] < S, other=0.0)
        else:
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
        if UPCAST_DOT:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk0 = tl.dot(q0, k)
        qk1 = tl.dot(q1, k)
        p0, m0, l0, acc0 = _softmax_step(qk0, m0, l0, acc0, offs_m0, cols, S, qk_scale, MASK, EXP2_EMUL, LAZY_TAU)
        acc0 = tl.dot(p0.to(v.dtype), v, acc0)
        p1, m1, l1, acc1 = _softmax_step(qk1, m1, l1, acc1, offs_m1, cols, S, qk_scale, MASK, EXP2_EMUL, LAZY_TAU)
        acc1 = tl.dot(p1.to(v.dtype), v, acc1)
    return acc0, l0, m0, acc1, l1, m1


@triton.jit
def _store_half(acc, l_i, m_i, o_ptr, lse_ptr, offs_m, offs_d, stride_os, stride_od, S, EVEN_S: tl.constexpr,
                STORE_LSE: tl.constexpr):
    acc = acc / l_i[:, None]
    o_ptrs = o_ptr + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    if EVEN_S:
        tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty))
    else:
        tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)
    if STORE_LSE:
        if EVEN_S:
            tl.store(lse_ptr + offs_m, m_i + tl.log2(l_i))
        else:
            tl.store(lse_ptr + offs_m, m_i + tl.log2(l_i), mask=offs_m < S)


@triton.jit
def attention_fwd_split_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    H, S, qk_scale,
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, EVEN_S: tl.constexpr, STORE_LSE: tl.constexpr,
    UPCAST_DOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EXP2_EMUL: tl.constexpr = 0,
    LAZY_TAU: tl.constexpr = 0.0,
):
    """attention_fwd_kernel's tile (same arguments, same causal split) as two BLOCK_M // 2-row halves."""
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    HALF: tl.constexpr = BLOCK_M // 2
    if CAUSAL:
        start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    q_ptr += off_b * stride_qb + off_h * stride_qh
    k_ptr += off_b * stride_kb + off_h * stride_kh
    v_ptr += off_b * stride_vb + off_h * stride_vh
    o_ptr += off_b * stride_ob + off_h * stride_oh
    lse_ptr += off_bh.to(tl.int64) * S
    offs_m0 = start_m * BLOCK_M + tl.arange(0, HALF)
    offs_m1 = offs_m0 + HALF
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    if EVEN_S:
        q0 = tl.load(q_ptr + offs_m0[:, None] * stride_qs + offs_d[None, :] * stride_qd)
        q1 = tl.load(q_ptr + offs_m1[:, None] * stride_qs + offs_d[None, :] * stride_qd)
    else:
        q0 = tl.load(q_ptr + offs_m0[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                     mask=offs_m0[:, None] < S, other=0.0)
        q1 = tl.load(q_ptr + offs_m1[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                     mask=offs_m1[:, None] < S, other=0.0)
    if UPCAST_DOT:
        q0 = q0.to(tl.float32)
        q1 = q1.to(tl.float32)
    m0 = tl.full((HALF,), float("-inf"), dtype=tl.float32)
    m1 = tl.full((HALF,), float("-inf"), dtype=tl.float32)
    l0 = tl.zeros((HALF,), dtype=tl.float32)
    l1 = tl.zeros((HALF,), dtype=tl.float32)
    acc0 = tl.zeros((HALF, HEAD_DIM), dtype=tl.float32)
    acc1 = tl.zeros((HALF, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        # Off-diagonal keys [0, start_m * BLOCK_M): visible to both halves. Then the diagonal band, masked: its
        # first key block holds key start_m * BLOCK_M <= every row of both halves, so m is finite before any
        # fully masked row.
        acc0, l0, m0, acc1, l1, m1 = _fwd_inner_halves(
            acc0, l0, m0, acc1, l1, m1, q0, q1, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
            offs_m0, offs_m1, offs_n, offs_d, 0, start_m * BLOCK_M, S, qk_scale,
            BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL, LAZY_TAU=LAZY_TAU)
        acc0, l0, m0, acc1, l1, m1 = _fwd_inner_halves(
            acc0, l0, m0, acc1, l1, m1, q0, q1, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
            offs_m0, offs_m1, offs_n, offs_d, start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, S), S,
            qk_scale, BLOCK_N=BLOCK_N, MASK=1, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL, LAZY_TAU=LAZY_TAU)
    else:
        if EVEN_S:
            full = S
        else:
            full = (S // BLOCK_N) * BLOCK_N
        acc0, l0, m0, acc1, l1, m1 = _fwd_inner_halves(
            acc0, l0, m0, acc1, l1, m1, q0, q1, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
            offs_m0, offs_m1, offs_n, offs_d, 0, full, S, qk_scale, BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT,
            EXP2_EMUL=EXP2_EMUL, LAZY_TAU=LAZY_TAU)
        if not EVEN_S:
            acc0, l0, m0, acc1, l1, m1 = _fwd_inner_halves(
                acc0, l0, m0, acc1, l1, m1, q0, q1, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                offs_m0, offs_m1, offs_n, offs_d, full, S, S, qk_scale, BLOCK_N=BLOCK_N, MASK=2,
                UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL, LAZY_TAU=LAZY_TAU)
    _store_half(acc0, l0, m0, o_ptr, lse_ptr, offs_m0, offs_d, stride_os, stride_od, S, EVEN_S, STORE_LSE)
    _store_half(acc1, l1, m1, o_ptr, lse_ptr, offs_m1, offs_d, stride_os, stride_od, S, EVEN_S, STORE_LSE)


# ------------------------------------------------------------------------------- forward, Hopper variants
# TMA tensor descriptors (host-side TensorDescriptor), optional warp specialization of the key loop and an
# optional persistent grid. Off under the interpreter and off by default until an H200 sweep
# (benchmarks/attention_sweep.py) shows them ahead of the pointer kernel; a "tma" FwdPlan opts in.
# "4d" descriptors span (B, H, S, D): TMA checks bounds per dimension, so a tail tile reads zeros and its store
# is clipped at S, never touching the next head; any S. "2d" descriptors span (B*H*S, D) (the tutorial's), taken
# only for contiguous tensors with S % BLOCK_M == 0, where no tile crosses a head.
try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # Triton without host-side descriptors
    TensorDescriptor = None


@triton.jit
def _tma_load(desc, off_b, off_h, row, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr, DESC_4D: tl.constexpr):
    """A (BLOCK, HEAD_DIM) tile at sequence row `row` (4-D) or flat row `row` (2-D)."""
    if DESC_4D:
        return desc.load([off_b, off_h, row, 0]).reshape(BLOCK, HEAD_DIM)
    else:
        return desc.load([row, 0])


@triton.jit
def _fwd_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_b, off_h, row0, offs_m, start_n, S, qk_scale,
                   HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr, DESC_4D: tl.constexpr,
                   EXP2_EMUL: tl.constexpr):
    """One key block of the online softmax (MASK as in _fwd_inner); the body of the key loop and of the
    straight-line diagonal / tail blocks."""
    k = _tma_load(k_desc, off_b, off_h, row0 + start_n, BLOCK_N, HEAD_DIM, DESC_4D)
    qk = tl.dot(q, tl.trans(k))
    if MASK == 1:
        # Causal: one compare and one select per score, then the unmasked arithmetic (the specialized loop masks
        # every block, so this is on the hot path; it was compare, and, multiply, select, subtract in round 5).
        # No sequence-end term: a row < S sees only keys <= row < S; rows >= S are never stored.
        qk = tl.where(offs_m[:, None] >= (start_n + tl.arange(0, BLOCK_N))[None, :], qk, float("-inf"))
    if MASK == 2:
        qk = tl.where((start_n + tl.arange(0, BLOCK_N))[None, :] < S, qk * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        qk = qk - m_new[:, None]
    else:  # -inf * qk_scale - m_new = -inf where masked; every row's first block has a visible key
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        qk = qk * qk_scale - m_new[:, None]
    p = _exp2(qk, EXP2_EMUL)
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None]
    v = _tma_load(v_desc, off_b, off_h, row0 + start_n, BLOCK_N, HEAD_DIM, DESC_4D)
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_new


@triton.jit
def _fwd_tma_tile(q_desc, k_desc, v_desc, o_desc, lse_ptr, start_m, off_bh, H, S, qk_scale,
                  HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, STORE_LSE: tl.constexpr, DESC_4D: tl.constexpr,
                  WARP_SPECIALIZE: tl.constexpr, EVEN_N: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, EXP2_EMUL: tl.constexpr):
    """One (query block, batch x head) tile of the forward.

    One key loop only. Without warp specialization it covers the unmasked blocks and the masked causal diagonal
    band (BLOCK_M // BLOCK_N blocks) and the partial tail block run unrolled after it. With it, the loop covers
    every block, masked throughout where any block needs a mask (two more operations per score: a compare and a
    select). Why: Triton's Hopper warp specialization (the nvgpu-warp-specialization pass, 3.6 through 3.9) aborts
    in MLIR dominance on a second loop holding a dot beside a specialized one, and on a dot after the loop whose
    row max or sum is broadcast back (the softmax of the diagonal block); a runtime `if` inside the loop compiles
    but is not specialized (`git show 161cdf8:benchmarks/explore/attention_ws_repro.py` reproduces each).
    """
    off_b = off_bh // H
    off_h = off_bh % H
    if DESC_4D:  # the head's first row in the descriptor's sequence dimension
        row0 = 0
    else:
        row0 = off_bh * S
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = _tma_load(q_desc, off_b, off_h, row0 + start_m * BLOCK_M, BLOCK_M, HEAD_DIM, DESC_4D)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if WARP_SPECIALIZE:
        if CAUSAL:  # every key block up to the diagonal band's end, masked (causal and the sequence end)
            hi = (start_m + 1) * BLOCK_M
            LOOP_MASK: tl.constexpr = 1
        elif EVEN_N:
            hi = S
            LOOP_MASK: tl.constexpr = 0
        else:  # every block, masked at the sequence end
            hi = tl.cdiv(S, BLOCK_N) * BLOCK_N
            LOOP_MASK: tl.constexpr = 2
    else:
        if CAUSAL:
            hi = start_m * BLOCK_M  # keys [0, hi): all < S and visible to every row of the tile
        elif EVEN_N:
            hi = S
        else:
            hi = (S // BLOCK_N) * BLOCK_N
        LOOP_MASK: tl.constexpr = 0
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        acc, l_i, m_i = _fwd_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_b, off_h, row0, offs_m, start_n, S,
                                       qk_scale, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, MASK=LOOP_MASK,
                                       DESC_4D=DESC_4D, EXP2_EMUL=EXP2_EMUL)
    if not WARP_SPECIALIZE:
        if CAUSAL:
            # The diagonal band, unrolled. Its first block holds key start_m * BLOCK_M <= every row, so m_i is
            # finite before a fully masked block; blocks past S (4-D descriptors only) load zeros, masked whole.
            for j in tl.static_range(BLOCK_M // BLOCK_N):
                acc, l_i, m_i = _fwd_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_b, off_h, row0, offs_m,
                                               hi + j * BLOCK_N, S, qk_scale, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N,
                                               MASK=1, DESC_4D=DESC_4D, EXP2_EMUL=EXP2_EMUL)
        elif not EVEN_N:  # the partial last key block (4-D descriptors only: 2-D needs S % BLOCK_M == 0)
            acc, l_i, m_i = _fwd_tma_block(acc, l_i, m_i, q, k_desc, v_desc, off_b, off_h, row0, offs_m, hi, S,
                                           qk_scale, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, MASK=2, DESC_4D=DESC_4D,
                                           EXP2_EMUL=EXP2_EMUL)
    acc = acc / l_i[:, None]
    out = acc.to(o_desc.dtype)
    if DESC_4D:
        o_desc.store([off_b, off_h, start_m * BLOCK_M, 0], out.reshape(1, 1, BLOCK_M, HEAD_DIM))
    else:
        o_desc.store([row0 + start_m * BLOCK_M, 0], out)
    if STORE_LSE:
        tl.store(lse_ptr + off_bh.to(tl.int64) * S + offs_m, m_i + tl.log2(l_i), mask=offs_m < S)


@triton.jit
def _device_desc(t_ptr, B, H, S, stride_b, stride_h, stride_s, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr,
                 DESC_4D: tl.constexpr):
    """An in-kernel descriptor over the (B, H, S, D) tensor at t_ptr (2-D: contiguous, (B*H*S, D))."""
    if DESC_4D:
        return tl.make_tensor_descriptor(t_ptr, shape=[B, H, S, HEAD_DIM], strides=[stride_b, stride_h, stride_s, 1],
                                         block_shape=[1, 1, BLOCK, HEAD_DIM])
    else:
        return tl.make_tensor_descriptor(t_ptr, shape=[B * H * S, HEAD_DIM], strides=[HEAD_DIM, 1],
                                         block_shape=[BLOCK, HEAD_DIM])


@triton.jit
def attention_fwd_tma_kernel(
    q_desc,  # host TensorDescriptors, or (DEVICE_DESC) the tensors themselves
    k_desc,
    v_desc,
    o_desc,
    lse_ptr,
    stride_qb,  # the strides are read only with DEVICE_DESC
    stride_qh,
    stride_qs,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_ob,
    stride_oh,
    stride_os,
    B,
    H,
    S,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    STORE_LSE: tl.constexpr,
    DESC_4D: tl.constexpr,
    DEVICE_DESC: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    PERSISTENT: tl.constexpr,
    EVEN_N: tl.constexpr,  # S % BLOCK_N == 0
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EXP2_EMUL: tl.constexpr = 0,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    BH = B * H
    if DEVICE_DESC:  # in-kernel descriptors (Triton's Hopper warp specialization wants these, not host ones)
        q_desc = _device_desc(q_desc, B, H, S, stride_qb, stride_qh, stride_qs, BLOCK_M, HEAD_DIM, DESC_4D)
        k_desc = _device_desc(k_desc, B, H, S, stride_kb, stride_kh, stride_ks, BLOCK_N, HEAD_DIM, DESC_4D)
        v_desc = _device_desc(v_desc, B, H, S, stride_vb, stride_vh, stride_vs, BLOCK_N, HEAD_DIM, DESC_4D)
        o_desc = _device_desc(o_desc, B, H, S, stride_ob, stride_oh, stride_os, BLOCK_M, HEAD_DIM, DESC_4D)
    if PERSISTENT:
        # A fixed grid of programs walks the tiles; tile t = (query block, batch x head), the query-block index
        # major so that (causal) every head's longest rows come first.
        n_m = tl.cdiv(S, BLOCK_M)
        for tile in range(tl.program_id(0), n_m * BH, tl.num_programs(0)):
            start_m = tile // BH
            if CAUSAL:
                start_m = n_m - 1 - start_m
            _fwd_tma_tile(q_desc, k_desc, v_desc, o_desc, lse_ptr, start_m, tile % BH, H, S, qk_scale,
                          HEAD_DIM=HEAD_DIM, CAUSAL=CAUSAL, STORE_LSE=STORE_LSE, DESC_4D=DESC_4D,
                          WARP_SPECIALIZE=WARP_SPECIALIZE, EVEN_N=EVEN_N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                          EXP2_EMUL=EXP2_EMUL)
    else:
        if CAUSAL:
            start_m = tl.num_programs(0) - 1 - tl.program_id(0)
        else:
            start_m = tl.program_id(0)
        _fwd_tma_tile(q_desc, k_desc, v_desc, o_desc, lse_ptr, start_m, tl.program_id(1), H, S, qk_scale,
                      HEAD_DIM=HEAD_DIM, CAUSAL=CAUSAL, STORE_LSE=STORE_LSE, DESC_4D=DESC_4D,
                      WARP_SPECIALIZE=WARP_SPECIALIZE, EVEN_N=EVEN_N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                      EXP2_EMUL=EXP2_EMUL)


def tma_supported(q: torch.Tensor) -> bool:
    """Host-side TMA descriptors: Triton has them, not the interpreter, a CUDA device of compute capability 9+."""
    return (TensorDescriptor is not None and not _INTERPRET and q.is_cuda
            and torch.cuda.get_device_capability(q.device)[0] >= 9)


def tma_refusal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: FwdPlan) -> str | None:
    """Why `plan` (a "tma" plan) cannot run on these tensors, or None when it can."""
    if not tma_supported(q):
        return "TMA descriptors need Triton's TensorDescriptor and a compute-capability-9 GPU (not the interpreter)"
    esize = q.element_size()
    for t in (q, k, v):
        if t.stride(-1) != 1 or t.data_ptr() % 16 or any(st * esize % 16 for st in t.stride()[:-1]):
            return "TMA needs a unit last stride and 16-byte aligned base and strides"
    if plan.desc == "2d" and (q.shape[2] % plan.block_m or not all(t.is_contiguous() for t in (q, k, v))):
        return "2-D descriptors need contiguous tensors and S % BLOCK_M == 0"
    if plan.desc not in ("2d", "4d"):
        return f"desc must be '4d' or '2d', got {plan.desc!r}"
    return None


def _scratch(size: int, alignment: int, stream) -> torch.Tensor:
    """Global-memory scratch for in-kernel descriptors (triton.set_allocator)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


try:  # where Triton keeps the allocator: a ContextVar (3.6 through 3.9), so each thread starts without one
    from triton.runtime._allocation import NullAllocator as _NullAllocator
    from triton.runtime._allocation import _allocator as _ALLOCATOR_VAR
except ImportError:  # another layout: set ours before every device-descriptor launch
    _NullAllocator = _ALLOCATOR_VAR = None


def _ensure_allocator(q: torch.Tensor) -> None:
    """In-kernel descriptors need Triton's scratch allocator in the launching thread. Triton's is a ContextVar:
    set in the main thread, it is still unset in autograd's backward thread (round 5's fwd+bwd rows failed with
    "no allocator was set"), so this runs before every launch that builds descriptors, and keeps an allocator the
    caller set in this thread."""
    if q.is_cuda and (_ALLOCATOR_VAR is None or isinstance(_ALLOCATOR_VAR.get(), _NullAllocator)):
        triton.set_allocator(_scratch)


def _forward_tma(q, k, v, o, lse, causal: bool, plan: FwdPlan):
    """Launch attention_fwd_tma_kernel as `plan` says (o is fresh, contiguous, q's shape); the compiled kernel.
    Checks nothing: forward() asks tma_refusal first (tests run this launch under the interpreter directly)."""
    B, H, S, D = q.shape
    if plan.device_desc:
        _ensure_allocator(q)

        def make(t, block):  # the kernel builds the descriptor from the tensor and its strides
            return t
    elif plan.desc == "4d":
        def make(t, block):
            return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, 1, block, D])
    else:
        def make(t, block):
            return TensorDescriptor(t, [B * H * S, D], [D, 1], [block, D])
    n_m = triton.cdiv(S, plan.block_m)
    if plan.persistent:
        sms = torch.cuda.get_device_properties(q.device).multi_processor_count
        grid = (min(sms * plan.persistent, n_m * B * H), 1)
    else:
        grid = (n_m, B * H)
    extra = {} if plan.maxnreg is None else {"maxnreg": plan.maxnreg}
    return attention_fwd_tma_kernel[grid](
        make(q, plan.block_m), make(k, plan.block_n), make(v, plan.block_n), make(o, plan.block_m),
        lse if lse is not None else o, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
        B, H, S, LOG2E / math.sqrt(D), HEAD_DIM=D, CAUSAL=causal, STORE_LSE=lse is not None,
        DESC_4D=plan.desc == "4d", DEVICE_DESC=plan.device_desc, WARP_SPECIALIZE=plan.ws,
        PERSISTENT=bool(plan.persistent), EVEN_N=S % plan.block_n == 0, BLOCK_M=plan.block_m,
        BLOCK_N=plan.block_n, EXP2_EMUL=_exp2_emul(plan), num_warps=plan.warps, num_stages=plan.stages, **extra)


# --------------------------------------------------------------------------------------------- backward
@triton.jit
def attention_bwd_preprocess_kernel(
    o_ptr,
    do_ptr,
    delta_ptr,
    stride_ob,
    stride_oh,
    stride_os,
    stride_od,
    stride_dob,
    stride_doh,
    stride_dos,
    stride_dod,
    H,
    S,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    """delta[bh, s] = sum_d o * do, in fp32: the softmax backward's row term."""
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < S
    o = tl.load(o_ptr + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_os
                + offs_d[None, :] * stride_od, mask=rows, other=0.0)
    do = tl.load(do_ptr + off_b * stride_dob + off_h * stride_doh + offs_m[:, None] * stride_dos
                 + offs_d[None, :] * stride_dod, mask=rows, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(delta_ptr + off_bh.to(tl.int64) * S + offs_m, delta, mask=offs_m < S)


@triton.jit
def _dkdv_inner(
    dk,
    dv,
    k,
    v,
    q_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    stride_qs,
    stride_qd,
    stride_dos,
    stride_dod,
    offs_n,
    offs_d,
    lo,
    hi,
    S,
    qk_scale,
    BLOCK_M: tl.constexpr,
    CAUSAL_MASK: tl.constexpr,
    EVEN_S: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
    EXP2_EMUL: tl.constexpr,
):
    offs_m0 = tl.arange(0, BLOCK_M)
    for start_m in range(lo, hi, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        offs_m = start_m + offs_m0
        qT_ptrs = q_ptr + offs_m[None, :] * stride_qs + offs_d[:, None] * stride_qd
        do_ptrs = do_ptr + offs_m[:, None] * stride_dos + offs_d[None, :] * stride_dod
        if EVEN_S:
            qT = tl.load(qT_ptrs)
            do = tl.load(do_ptrs)
            lse = tl.load(lse_ptr + offs_m)
            delta = tl.load(delta_ptr + offs_m)
        else:
            # Rows past S load as zeros (q, do, delta): their p is finite and their terms are exactly zero.
            rows = offs_m < S
            qT = tl.load(qT_ptrs, mask=rows[None, :], other=0.0)
            do = tl.load(do_ptrs, mask=rows[:, None], other=0.0)
            lse = tl.load(lse_ptr + offs_m, mask=rows, other=0.0)
            delta = tl.load(delta_ptr + offs_m, mask=rows, other=0.0)
        if UPCAST_DOT:
            qT = qT.to(tl.float32)
            do = do.to(tl.float32)
        # Transposed scores (keys x queries): the program's keys stay in registers, the queries stream.
        pT = _exp2(tl.dot(k, qT) * qk_scale - lse[None, :], EXP2_EMUL)
        if CAUSAL_MASK:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        dv = tl.dot(pT.to(do.dtype), do, dv)
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - delta[None, :])
        dk = tl.dot(dsT.to(qT.dtype), tl.trans(qT), dk)
    return dk, dv


@triton.jit
def attention_bwd_dkdv_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    dk_ptr,
    dv_ptr,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_vd,
    stride_dob,
    stride_doh,
    stride_dos,
    stride_dod,
    stride_dkb,
    stride_dkh,
    stride_dks,
    stride_dkd,
    stride_dvb,
    stride_dvh,
    stride_dvs,
    stride_dvd,
    H,
    S,
    qk_scale,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    EVEN_S: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EXP2_EMUL: tl.constexpr = 0,
):
    tl.static_assert(BLOCK_N % BLOCK_M == 0)
    start_n = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    q_ptr += off_b * stride_qb + off_h * stride_qh
    k_ptr += off_b * stride_kb + off_h * stride_kh
    v_ptr += off_b * stride_vb + off_h * stride_vh
    do_ptr += off_b * stride_dob + off_h * stride_doh
    lse_ptr += off_bh.to(tl.int64) * S
    delta_ptr += off_bh.to(tl.int64) * S
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k_ptrs = k_ptr + offs_n[:, None] * stride_ks + offs_d[None, :] * stride_kd
    v_ptrs = v_ptr + offs_n[:, None] * stride_vs + offs_d[None, :] * stride_vd
    if EVEN_S:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    else:
        k = tl.load(k_ptrs, mask=offs_n[:, None] < S, other=0.0)
        v = tl.load(v_ptrs, mask=offs_n[:, None] < S, other=0.0)
    if UPCAST_DOT:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        lo = start_n * BLOCK_N
        # Diagonal band: queries [lo, lo + BLOCK_N) see only part of this key block.
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qs, stride_qd, stride_dos,
                             stride_dod, offs_n, offs_d, lo, lo + BLOCK_N, S, qk_scale,
                             BLOCK_M=BLOCK_M, CAUSAL_MASK=True, EVEN_S=EVEN_S, UPCAST_DOT=UPCAST_DOT,
                             EXP2_EMUL=EXP2_EMUL)
        # Below the band every query sees every key of the block.
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qs, stride_qd, stride_dos,
                             stride_dod, offs_n, offs_d, lo + BLOCK_N, S, S, qk_scale,
                             BLOCK_M=BLOCK_M, CAUSAL_MASK=False, EVEN_S=EVEN_S, UPCAST_DOT=UPCAST_DOT,
                             EXP2_EMUL=EXP2_EMUL)
    else:
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qs, stride_qd, stride_dos,
                             stride_dod, offs_n, offs_d, 0, S, S, qk_scale,
                             BLOCK_M=BLOCK_M, CAUSAL_MASK=False, EVEN_S=EVEN_S, UPCAST_DOT=UPCAST_DOT,
                             EXP2_EMUL=EXP2_EMUL)
    dk *= sm_scale
    dk_ptrs = dk_ptr + off_b * stride_dkb + off_h * stride_dkh + offs_n[:, None] * stride_dks \
        + offs_d[None, :] * stride_dkd
    dv_ptrs = dv_ptr + off_b * stride_dvb + off_h * stride_dvh + offs_n[:, None] * stride_dvs \
        + offs_d[None, :] * stride_dvd
    if EVEN_S:
        tl.store(dk_ptrs, dk.to(dk_ptr.dtype.element_ty))
        tl.store(dv_ptrs, dv.to(dv_ptr.dtype.element_ty))
    else:
        tl.store(dk_ptrs, dk.to(dk_ptr.dtype.element_ty), mask=offs_n[:, None] < S)
        tl.store(dv_ptrs, dv.to(dv_ptr.dtype.element_ty), mask=offs_n[:, None] < S)


@triton.jit
def _dq_inner(
    dq,
    q,
    do,
    lse,
    delta,
    k_ptr,
    v_ptr,
    stride_ks,
    stride_kd,
    stride_vs,
    stride_vd,
    offs_m,
    offs_d,
    lo,
    hi,
    S,
    qk_scale,
    BLOCK_N: tl.constexpr,
    MASK: tl.constexpr,  # 0: none, 1: causal diagonal (and the sequence end), 2: the sequence end only
    UPCAST_DOT: tl.constexpr,
    EXP2_EMUL: tl.constexpr,
):
    offs_n0 = tl.arange(0, BLOCK_N)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n0
        kT_ptrs = k_ptr + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd
        vT_ptrs = v_ptr + cols[None, :] * stride_vs + offs_d[:, None] * stride_vd
        if MASK != 0:
            kT = tl.load(kT_ptrs, mask=cols[None, :] < S, other=0.0)
            vT = tl.load(vT_ptrs, mask=cols[None, :] < S, other=0.0)
        else:
            kT = tl.load(kT_ptrs)
            vT = tl.load(vT_ptrs)
        if UPCAST_DOT:
            kT = kT.to(tl.float32)
            vT = vT.to(tl.float32)
        p = _exp2(tl.dot(q, kT) * qk_scale - lse[:, None], EXP2_EMUL)
        if MASK == 1:
            p = tl.where(offs_m[:, None] >= cols[None, :], p, 0.0)
        elif MASK == 2:
            p = tl.where(cols[None, :] < S, p, 0.0)
        dp = tl.dot(do, vT)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(kT.dtype), tl.trans(kT), dq)
    return dq


@triton.jit
def attention_bwd_dq_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    dq_ptr,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_vd,
    stride_dob,
    stride_doh,
    stride_dos,
    stride_dod,
    stride_dqb,
    stride_dqh,
    stride_dqs,
    stride_dqd,
    H,
    S,
    qk_scale,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    EVEN_S: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EXP2_EMUL: tl.constexpr = 0,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    if CAUSAL:
        start_m = tl.num_programs(0) - 1 - tl.program_id(0)  # longest rows first, as in the forward
    else:
        start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    q_ptr += off_b * stride_qb + off_h * stride_qh
    k_ptr += off_b * stride_kb + off_h * stride_kh
    v_ptr += off_b * stride_vb + off_h * stride_vh
    do_ptr += off_b * stride_dob + off_h * stride_doh
    lse_ptr += off_bh.to(tl.int64) * S
    delta_ptr += off_bh.to(tl.int64) * S
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    do_ptrs = do_ptr + offs_m[:, None] * stride_dos + offs_d[None, :] * stride_dod
    if EVEN_S:
        q = tl.load(q_ptrs)
        do = tl.load(do_ptrs)
        lse = tl.load(lse_ptr + offs_m)
        delta = tl.load(delta_ptr + offs_m)
    else:
        rows = offs_m < S
        q = tl.load(q_ptrs, mask=rows[:, None], other=0.0)
        do = tl.load(do_ptrs, mask=rows[:, None], other=0.0)
        lse = tl.load(lse_ptr + offs_m, mask=rows, other=0.0)
        delta = tl.load(delta_ptr + offs_m, mask=rows, other=0.0)
    if UPCAST_DOT:
        q = q.to(tl.float32)
        do = do.to(tl.float32)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        # Keys [0, start_m * BLOCK_M) are all < S and visible to every row; then the diagonal band.
        dq = _dq_inner(dq, q, do, lse, delta, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd, offs_m,
                       offs_d, 0, start_m * BLOCK_M, S, qk_scale, BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT,
                       EXP2_EMUL=EXP2_EMUL)
        dq = _dq_inner(dq, q, do, lse, delta, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd, offs_m,
                       offs_d, start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, S), S, qk_scale,
                       BLOCK_N=BLOCK_N, MASK=1, UPCAST_DOT=UPCAST_DOT, EXP2_EMUL=EXP2_EMUL)
    else:
        if EVEN_S:
            full = S
        else:
            full = (S // BLOCK_N) * BLOCK_N
        dq = _dq_inner(dq, q, do, lse, delta, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd, offs_m,
                       offs_d, 0, full, S, qk_scale, BLOCK_N=BLOCK_N, MASK=0, UPCAST_DOT=UPCAST_DOT,
                       EXP2_EMUL=EXP2_EMUL)
        if not EVEN_S:
            dq = _dq_inner(dq, q, do, lse, delta, k_ptr, v_ptr, stride_ks, stride_kd, stride_vs, stride_vd,
                           offs_m, offs_d, full, S, S, qk_scale, BLOCK_N=BLOCK_N, MASK=2, UPCAST_DOT=UPCAST_DOT,
                           EXP2_EMUL=EXP2_EMUL)
    dq *= sm_scale
    dq_ptrs = dq_ptr + off_b * stride_dqb + off_h * stride_dqh + offs_m[:, None] * stride_dqs \
        + offs_d[None, :] * stride_dqd
    if EVEN_S:
        tl.store(dq_ptrs, dq.to(dq_ptr.dtype.element_ty))
    else:
        tl.store(dq_ptrs, dq.to(dq_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


# ------------------------------------------------------------------------------ backward, Hopper variant
# dK/dV with descriptors built in the kernel over contiguous (B*H*S, D) tensors (S a multiple of both blocks, which
# bwd_tma_refusal checks), optionally warp-specialized (Triton's Hopper pass then runs a TMA producer warpgroup and
# two consumer warpgroups sharing the BLOCK_N key rows), optionally with dQ fused in (FUSED_DQ: each (key block,
# query block) step adds its dS K into an fp32 dQ through a TMA reduce, cp.reduce.async.bulk, as FlashAttention 2
# and 3 do, or through vector atomics; 5 matmuls per step instead of the 4 + 3 of the dK/dV and dQ kernels). What
# the pass accepts (measured on the CPU sm_90 compile, Triton 3.6 and 3.9): this loop with FUSED_DQ off; not with
# FUSED_DQ on (the reduce inside a specialized loop); the dQ loop (attention_bwd_dq_tma_kernel) only with its rows'
# log-sum-exp and delta carried through the loop (see there).
@triton.jit
def _dkdv_tma_block(dk, dv, k, v, q_desc, do_desc, dq_desc, dq_ptr, lse_ptr, delta_ptr, row0, start_m, offs_n,
                    qk_scale, sm_scale, HEAD_DIM: tl.constexpr, MASK: tl.constexpr, FUSED_DQ: tl.constexpr,
                    BLOCK_M: tl.constexpr, EXP2_EMUL: tl.constexpr):
    """One query block's contribution to the key block's dK, dV (and, FUSED_DQ, its dQ rows)."""
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([row0 + start_m, 0])
    do = do_desc.load([row0 + start_m, 0])
    lse = tl.load(lse_ptr + row0 + offs_m)
    delta = tl.load(delta_ptr + row0 + offs_m)
    pT = _exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :], EXP2_EMUL)
    if MASK:
        pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
    dv = tl.dot(pT.to(do.dtype), do, dv)
    dsT = pT * (tl.dot(v, tl.trans(do)) - delta[None, :])
    dk = tl.dot(dsT.to(q.dtype), q, dk)
    if FUSED_DQ != 0:
        dq = tl.dot(tl.trans((dsT * sm_scale).to(k.dtype)), k)
        if FUSED_DQ == 1:  # one TMA reduce of the tile (cp.reduce.async.bulk.tensor ... add)
            dq_desc.atomic_add([row0 + start_m, 0], dq)
        else:  # per-thread vector atomics (atom.global.relaxed.add.v4.f32)
            dq_ptrs = dq_ptr + (row0 + offs_m).to(tl.int64)[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
            tl.atomic_add(dq_ptrs, dq, sem="relaxed")
    return dk, dv


@triton.jit
def attention_bwd_dkdv_tma_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_ptr, S,
                                  qk_scale, sm_scale, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                                  WARP_SPECIALIZE: tl.constexpr, FUSED_DQ: tl.constexpr, BLOCK_M: tl.constexpr,
                                  BLOCK_N: tl.constexpr, EXP2_EMUL: tl.constexpr = 0):
    """A program per (key block, batch x head): dK, dV of BLOCK_N keys; FUSED_DQ 1 (TMA reduces) or 2 (vector
    atomics) also adds each query block's dQ share into dq_ptr (fp32 zeros)."""
    tl.static_assert(BLOCK_N % BLOCK_M == 0)
    rows = tl.num_programs(1) * S
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    do_desc = tl.make_tensor_descriptor(do_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    dk_desc = tl.make_tensor_descriptor(dk_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_N, HEAD_DIM])
    dv_desc = tl.make_tensor_descriptor(dv_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_N, HEAD_DIM])
    dq_desc = tl.make_tensor_descriptor(dq_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_M, HEAD_DIM])
    row0 = tl.program_id(1) * S
    start_n = tl.program_id(0) * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    k = k_desc.load([row0 + start_n, 0])
    v = v_desc.load([row0 + start_n, 0])
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    if CAUSAL and not WARP_SPECIALIZE:
        # The diagonal band masked, then every query below it unmasked (two loops: fine without specialization).
        for start_m in tl.range(start_n, start_n + BLOCK_N, BLOCK_M):
            dk, dv = _dkdv_tma_block(dk, dv, k, v, q_desc, do_desc, dq_desc, dq_ptr, lse_ptr, delta_ptr, row0,
                                     start_m, offs_n, qk_scale, sm_scale, HEAD_DIM=HEAD_DIM, MASK=True,
                                     FUSED_DQ=FUSED_DQ, BLOCK_M=BLOCK_M, EXP2_EMUL=EXP2_EMUL)
        lo = start_n + BLOCK_N
        LOOP_MASK: tl.constexpr = False
    elif CAUSAL:  # one loop, masked throughout (the specialized loop must be the kernel's only one)
        lo = start_n
        LOOP_MASK: tl.constexpr = True
    else:
        lo = 0
        LOOP_MASK: tl.constexpr = False
    for start_m in tl.range(lo, S, BLOCK_M, warp_specialize=WARP_SPECIALIZE):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        dk, dv = _dkdv_tma_block(dk, dv, k, v, q_desc, do_desc, dq_desc, dq_ptr, lse_ptr, delta_ptr, row0, start_m,
                                 offs_n, qk_scale, sm_scale, HEAD_DIM=HEAD_DIM, MASK=LOOP_MASK, FUSED_DQ=FUSED_DQ,
                                 BLOCK_M=BLOCK_M, EXP2_EMUL=EXP2_EMUL)
    dk_desc.store([row0 + start_n, 0], (dk * sm_scale).to(dk_desc.dtype))
    dv_desc.store([row0 + start_n, 0], dv.to(dv_desc.dtype))


@triton.jit
def attention_bwd_dq_tma_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, S, qk_scale, sm_scale,
                                HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EXP2_EMUL: tl.constexpr = 0):
    """A program per (query block, batch x head): dQ of BLOCK_M queries over descriptors, one key loop (masked
    throughout when causal, as the specialized forward)."""
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    rows = tl.num_programs(1) * S
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    do_desc = tl.make_tensor_descriptor(do_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    dq_desc = tl.make_tensor_descriptor(dq_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                        block_shape=[BLOCK_M, HEAD_DIM])
    if CAUSAL:
        start_m = (tl.num_programs(0) - 1 - tl.program_id(0)) * BLOCK_M  # longest rows first
        hi = start_m + BLOCK_M
    else:
        start_m = tl.program_id(0) * BLOCK_M
        hi = S
    row0 = tl.program_id(1) * S
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([row0 + start_m, 0])
    do = do_desc.load([row0 + start_m, 0])
    lse = tl.load(lse_ptr + row0 + offs_m)
    delta = tl.load(delta_ptr + row0 + offs_m)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = k_desc.load([row0 + start_n, 0])
        v = v_desc.load([row0 + start_n, 0])
        qk = tl.dot(q, tl.trans(k))
        # lse and delta ride through the loop, re-derived from this block's scores (+ 0 x the row max): Triton's
        # Hopper pass asserts on a loop-invariant row vector broadcast into the scores, but partitions one that
        # an in-loop reduction feeds (attention_ws_repro.py); costs one row max per block.
        anchor = tl.max(qk, axis=1) * 0.0
        lse = lse + anchor
        delta = delta + anchor
        p = _exp2(qk * qk_scale - lse[:, None], EXP2_EMUL)
        if CAUSAL:
            p = tl.where(offs_m[:, None] >= (start_n + tl.arange(0, BLOCK_N))[None, :], p, 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    dq_desc.store([row0 + start_m, 0], (dq * sm_scale).to(dq_desc.dtype))


_KEY = ["S", "HEAD_DIM", "CAUSAL", "EVEN_S"]
_fwd_tuned = triton.autotune(configs=_configs(FWD_CONFIGS, _INTERP_FWD), key=_KEY)(attention_fwd_kernel)
_dkdv_tuned = triton.autotune(configs=_configs(DKDV_CONFIGS, _INTERP_DKDV), key=_KEY)(attention_bwd_dkdv_kernel)
_dq_tuned = triton.autotune(configs=_configs(DQ_CONFIGS, _INTERP_DQ), key=_KEY)(attention_bwd_dq_kernel)


# ------------------------------------------------------------------------------------------------- host
def check_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Refuse what the kernels do not handle, with the reason."""
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(
            f"q, k, v must share one (B, H, S, D) shape, got {tuple(q.shape)}, {tuple(k.shape)}, "
            f"{tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    D = q.shape[-1]
    if D < 16 or D > 256 or D & (D - 1):
        raise ValueError(
            f"head_dim D={D} is not supported: it must be a power of 2 in [16, 256] (tl.dot tiles)"
        )


def _launch(kernel, tuned, config: tuple[int, int, int, int] | None, grid, *args, maxnreg: int | None = None, **meta):
    """Launch the autotuned kernel, or the plain one at an explicit (BLOCK_M, BLOCK_N, warps, stages)."""
    if config is None:
        return tuned[grid](*args, **meta)
    block_m, block_n, warps, stages = config
    extra = {} if maxnreg is None else {"maxnreg": maxnreg}
    return kernel[grid](*args, **meta, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps, num_stages=stages,
                        **extra)


def _exp2_emul(plan: FwdPlan | BwdPlan | None) -> int:
    """The kernels' EXP2_EMUL for `plan`: its emul (0, 2, 4, 8), or -1 under the interpreter, which runs no
    inline PTX (every exponential through the same polynomial in plain Triton)."""
    emul = 0 if plan is None else plan.emul
    if emul not in (0, 2, 4, 8):
        raise ValueError(f"{type(plan).__name__}.emul must be 0, 2, 4 or 8, got {emul!r}")
    return -1 if emul and _INTERPRET else emul


def plan_for(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> FwdPlan | None:
    """The forward plan these tensors run: FWD_PLANS's entry (a "tma" one only where TMA can run, else
    PTR_FALLBACK), None under the interpreter or for an unplanned D (autotuned pointer kernel)."""
    if _INTERPRET:
        return None
    plan = FWD_PLANS.get((causal, q.shape[-1]))
    if plan is not None and plan.kind == "tma" and tma_refusal(q, k, v, plan) is not None:
        plan = PTR_FALLBACK.get(q.shape[-1])
    return plan


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True, store_lse: bool = False,
            plan: FwdPlan | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention output (B, H, S, D) and, with store_lse, the base-2 row log-sum-exp (B*H, S) fp32.

    plan: a FwdPlan to run (a "tma" plan raises where tma_refusal says why not); default plan_for(q, k, v, causal).
    """
    global LAST_COMPILED
    B, H, S, D = q.shape
    o = torch.empty((B, H, S, D), device=q.device, dtype=q.dtype)
    lse = torch.empty((B * H, S), device=q.device, dtype=torch.float32) if store_lse else None
    if o.numel() == 0:
        return o, lse
    if plan is None:
        plan = plan_for(q, k, v, causal)
    if plan is not None and plan.kind == "tma" and plan.lazy:
        raise ValueError(f"{plan}: lazy rescaling is for 'ptr' and 'split' plans (a runtime branch in the loop)")
    if plan is not None and plan.kind == "tma":
        why = tma_refusal(q, k, v, plan)
        if why is not None:
            raise ValueError(f"{plan} cannot run here: {why}")
        LAST_COMPILED = _forward_tma(q, k, v, o, lse, causal, plan)
        return o, lse
    if plan is not None and plan.kind not in ("ptr", "split"):
        raise ValueError(f"FwdPlan.kind must be 'ptr', 'split' or 'tma', got {plan.kind!r}")

    def grid(meta: dict) -> tuple[int, int]:
        return (triton.cdiv(S, meta["BLOCK_M"]), B * H)

    kernel = attention_fwd_split_kernel if plan is not None and plan.kind == "split" else attention_fwd_kernel
    config = None if plan is None else plan.config
    compiled = _launch(kernel, _fwd_tuned, config, grid, q, k, v, o, lse if store_lse else o,
                       *q.stride(), *k.stride(), *v.stride(), *o.stride(), H, S, LOG2E / math.sqrt(D),
                       maxnreg=None if plan is None else plan.maxnreg, HEAD_DIM=D, CAUSAL=causal,
                       EVEN_S=_even(S, config), STORE_LSE=store_lse,
                       UPCAST_DOT=_INTERPRET and q.dtype == torch.bfloat16,
                       EXP2_EMUL=_exp2_emul(plan), LAZY_TAU=0.0 if plan is None else float(plan.lazy))
    if plan is not None:
        LAST_COMPILED = compiled
    return o, lse


def bwd_plan_for(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> BwdPlan | None:
    """The backward plan these tensors run: BWD_PLANS's entry (a "tma" one only where bwd_tma_refusal has no
    objection, else BWD_PTR_FALLBACK), None under the interpreter or for an unplanned D (autotuned kernels)."""
    if _INTERPRET:
        return None
    plan = BWD_PLANS.get((causal, q.shape[-1]))
    if plan is not None and plan.kind == "tma" and bwd_tma_refusal(q, k, v, plan) is not None:
        plan = BWD_PTR_FALLBACK.get(q.shape[-1])
    return plan


def bwd_tma_refusal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: BwdPlan) -> str | None:
    """Why the "tma" backward `plan` cannot run on these tensors, or None when it can."""
    if not tma_supported(q):
        return "TMA descriptors need Triton's TensorDescriptor and a compute-capability-9 GPU (not the interpreter)"
    if not all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (q, k, v)):
        return "the TMA backward needs contiguous, 16-byte aligned q, k, v"
    if any(q.shape[2] % b for b in (*plan.dkdv[:2], *(plan.dq[:2] if plan.dq_ws else ()))):
        return "the TMA backward needs S to be a multiple of its BLOCK_M and BLOCK_N"
    return None


def _dkdv_tma(q, k, v, do, lse, delta, dk, dv, dq_acc, causal: bool, plan: BwdPlan):
    """Launch attention_bwd_dkdv_tma_kernel as `plan` says (dq_acc: fp32 zeros with fused_dq); the compiled kernel.
    Checks nothing: backward() asks bwd_tma_refusal first (tests run this launch under the interpreter directly)."""
    _ensure_allocator(q)
    B, H, S, D = q.shape
    block_m, block_n, warps, stages = plan.dkdv
    sm_scale = 1.0 / math.sqrt(D)
    return attention_bwd_dkdv_tma_kernel[(S // block_n, B * H)](
        q, k, v, do, lse, delta, dk, dv, dq_acc, S, sm_scale * LOG2E, sm_scale, HEAD_DIM=D, CAUSAL=causal,
        WARP_SPECIALIZE=plan.ws, FUSED_DQ=2 if _INTERPRET and plan.fused_dq == 1 else plan.fused_dq,
        BLOCK_M=block_m, BLOCK_N=block_n, EXP2_EMUL=_exp2_emul(plan), num_warps=warps, num_stages=stages)


def _dq_tma(q, k, v, do, lse, delta, dq, causal: bool, plan: BwdPlan):
    """Launch attention_bwd_dq_tma_kernel, warp-specialized, at plan.dq (as _dkdv_tma: checks nothing)."""
    _ensure_allocator(q)
    B, H, S, D = q.shape
    block_m, block_n, warps, stages = plan.dq
    sm_scale = 1.0 / math.sqrt(D)
    return attention_bwd_dq_tma_kernel[(S // block_m, B * H)](
        q, k, v, do, lse, delta, dq, S, sm_scale * LOG2E, sm_scale, HEAD_DIM=D, CAUSAL=causal,
        WARP_SPECIALIZE=True, BLOCK_M=block_m, BLOCK_N=block_n, EXP2_EMUL=_exp2_emul(plan), num_warps=warps,
        num_stages=stages)


def backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
             do: torch.Tensor, causal: bool = True, dkdv_config: tuple[int, int, int, int] | None = None,
             dq_config: tuple[int, int, int, int] | None = None,
             plan: BwdPlan | None = None) -> tuple[torch.Tensor, ...]:
    """dq, dk, dv for upstream gradient do, given forward's o and lse.

    plan: a BwdPlan to run (a "tma" plan raises where bwd_tma_refusal says why not); default bwd_plan_for(...).
    dkdv_config / dq_config: pointer kernels at these configs instead (both given or taken from the plan)."""
    global LAST_COMPILED_BWD
    B, H, S, D = q.shape
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if q.numel() == 0:
        return dq, dk, dv
    sm_scale = 1.0 / math.sqrt(D)
    if plan is None:
        plan = bwd_plan_for(q, k, v, causal)
        if plan is not None and (dkdv_config is not None or dq_config is not None):
            plan = BwdPlan(plan.dkdv, plan.dq) if plan.kind == "ptr" else BWD_PTR_FALLBACK.get(D, plan)
    if plan is not None and plan.kind not in ("ptr", "tma"):
        raise ValueError(f"BwdPlan.kind must be 'ptr' or 'tma', got {plan.kind!r}")
    if plan is not None and plan.kind == "tma":
        why = bwd_tma_refusal(q, k, v, plan)
        if why is not None:
            raise ValueError(f"{plan} cannot run here: {why}")
    delta = torch.empty((B * H, S), device=q.device, dtype=torch.float32)
    attention_bwd_preprocess_kernel[(triton.cdiv(S, 64), B * H)](
        o, do, delta, *o.stride(), *do.stride(), H, S, HEAD_DIM=D, BLOCK_M=64)
    if plan is not None and plan.kind == "tma":
        do = do.contiguous()  # (a loss's expanded gradient has stride 0)
        dq_acc = torch.zeros((B, H, S, D), device=q.device, dtype=torch.float32) if plan.fused_dq else dq
        LAST_COMPILED_BWD = _dkdv_tma(q, k, v, do, lse, delta, dk, dv, dq_acc, causal, plan)
        if plan.fused_dq:
            return dq_acc.to(q.dtype), dk, dv
        if plan.dq_ws:
            _dq_tma(q, k, v, do, lse, delta, dq, causal, plan)
            return dq, dk, dv
    if plan is not None:
        dkdv_config = plan.dkdv if dkdv_config is None else dkdv_config
        dq_config = plan.dq if dq_config is None else dq_config
    meta = dict(HEAD_DIM=D, CAUSAL=causal, UPCAST_DOT=_INTERPRET and q.dtype == torch.bfloat16,
                EXP2_EMUL=_exp2_emul(plan))

    def grid_n(m: dict) -> tuple[int, int]:
        return (triton.cdiv(S, m["BLOCK_N"]), B * H)

    def grid_m(m: dict) -> tuple[int, int]:
        return (triton.cdiv(S, m["BLOCK_M"]), B * H)

    if plan is None or plan.kind == "ptr":
        _launch(attention_bwd_dkdv_kernel, _dkdv_tuned, dkdv_config, grid_n, q, k, v, do, lse, delta, dk, dv,
                *q.stride(), *k.stride(), *v.stride(), *do.stride(), *dk.stride(), *dv.stride(), H, S,
                sm_scale * LOG2E, sm_scale, EVEN_S=_even(S, dkdv_config), **meta)
    _launch(attention_bwd_dq_kernel, _dq_tuned, dq_config, grid_m, q, k, v, do, lse, delta, dq,
            *q.stride(), *k.stride(), *v.stride(), *do.stride(), *dq.stride(), H, S,
            sm_scale * LOG2E, sm_scale, EVEN_S=_even(S, dq_config), **meta)
    return dq, dk, dv


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
        o, lse = forward(q, k, v, causal, store_lse=True)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do: torch.Tensor):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = backward(q, k, v, o, lse, do, ctx.causal)
        return dq, dk, dv, None


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """Scaled dot-product attention (softmax scale 1/sqrt(D)), causal unless causal=False; differentiable."""
    check_inputs(q, k, v)
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return _Attention.apply(q, k, v, causal)
    return forward(q, k, v, causal)[0]


def attention_noncausal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Non-causal attention: the entry reference_noncausal.py's `attention_noncausal` is checked against."""
    return attention(q, k, v, causal=False)
