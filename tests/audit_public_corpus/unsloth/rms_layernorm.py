# audit public corpus: unsloth 2026.10.9, unsloth/kernels/rms_layernorm.py (Apache-2.0 license), copied unchanged below this header.
# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import functools
import hashlib
import os
import warnings
import triton
import triton.language as tl
import torch
from typing import Tuple
from .utils import calculate_settings, long_indexing, norm_num_warps, torch_gpu_device
from . import triton_launch
from .triton_launch import launch


@triton.jit
def _rms_layernorm_forward(
    Y,
    X,
    W,
    r,
    Y_row_stride: tl.constexpr,
    X_row_stride: tl.constexpr,
    W_row_stride: tl.constexpr,
    r_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    """
    Fast RMS Layernorm kernel
    Inspiration from a Triton tutorial:
    https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html
    """
    row_idx = tl.program_id(0)
    if LONG_INDEXING:
        row_idx = row_idx.to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx * r_row_stride

    X_row = tl.load(X + col_offsets, mask = mask, other = 0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask = mask, other = 0)

    row_var = tl.sum(X_row * X_row, axis = 0) / n_cols
    # Explicit float32 scalar to ensure correct type promotion on HIP/ROCm.
    eps_f32 = tl.full((), eps, tl.float32)
    inv_var = tl.math.rsqrt(row_var + eps_f32)
    tl.store(r, inv_var)
    normed = X_row * inv_var
    normed = normed.to(W_row.dtype)  # Exact copy from HF
    output = normed * W_row
    tl.store(Y + col_offsets, output, mask = mask)


@triton.jit
def _rms_backward_row(
    dY,
    dY_row_stride: tl.constexpr,
    dX,
    dX_row_stride: tl.constexpr,
    X,
    X_row_stride: tl.constexpr,
    W,
    r,
    r_row_stride: tl.constexpr,
    row_idx,
    col_offsets,
    mask,
    n_cols: tl.constexpr,
    GEMMA: tl.constexpr,
    dW_acc,
    TRAIN_W: tl.constexpr,
    FROM_Y: tl.constexpr,
):
    # with FROM_Y, X holds Y and normed = Y / W; r still scales dX.
    dY += row_idx * dY_row_stride
    X += row_idx * X_row_stride
    r += row_idx * r_row_stride
    dX += row_idx * dX_row_stride

    dY_row = tl.load(dY + col_offsets, mask = mask, other = 0).to(tl.float32)
    X_row = tl.load(X + col_offsets, mask = mask, other = 0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask = mask, other = 0).to(tl.float32)

    inv_var = tl.load(r).to(tl.float32)
    if FROM_Y:
        # masked lanes would divide 0 by 0.
        normed = tl.where(mask, X_row / (W_row + 1.0 if GEMMA else W_row), 0.0)
    else:
        normed = X_row * inv_var
    if TRAIN_W:
        # accumulate dW before the row sum to free the fp32 dY row and keep all programs resident.
        if GEMMA:
            dW_acc += dY_row * normed
        else:
            # The forward multiplies W by normed rounded to W's dtype.
            dW_acc += dY_row * normed.to(W.dtype.element_ty).to(tl.float32)

    if GEMMA:
        dY_W = dY_row * (W_row + 1.0)
    else:
        dY_W = dY_row * W_row

    rowsum_dY_normed = tl.sum(dY_W * normed, axis = 0)
    output = inv_var / n_cols * (n_cols * dY_W - normed * rowsum_dY_normed)
    tl.store(dX + col_offsets, output, mask = mask)
    return dW_acc


def _rms_layernorm_backward(
    dY,
    dX,
    X,
    W,
    r,
    dW,
    n_rows,
    rows_per_program,
    dY_row_stride: tl.constexpr,
    dX_row_stride: tl.constexpr,
    X_row_stride: tl.constexpr,
    W_row_stride: tl.constexpr,
    r_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    GEMMA: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    TRAIN_W: tl.constexpr,
    FROM_Y: tl.constexpr,
):
    """
    Fast RMS Layernorm kernel for the backward pass
    Inspiration from a Triton tutorial:
    https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html
    TRAIN_W: per-program fp32 dW partials (fla-org/flash-linear-attention layer_norm_bwd_kernel_row).
    """
    pid = tl.program_id(0)
    if LONG_INDEXING:
        pid = pid.to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    if TRAIN_W:
        dW_acc = tl.zeros((BLOCK_SIZE,), dtype = tl.float32)
        row_start = pid * rows_per_program
        for row_idx in range(row_start, tl.minimum(row_start + rows_per_program, n_rows)):
            dW_acc = _rms_backward_row(
                dY,
                dY_row_stride,
                dX,
                dX_row_stride,
                X,
                X_row_stride,
                W,
                r,
                r_row_stride,
                row_idx,
                col_offsets,
                mask,
                n_cols,
                GEMMA,
                dW_acc,
                True,
                FROM_Y,
            )
        tl.store(dW + pid * n_cols + col_offsets, dW_acc, mask = mask)
    else:
        _rms_backward_row(
            dY,
            dY_row_stride,
            dX,
            dX_row_stride,
            X,
            X_row_stride,
            W,
            r,
            r_row_stride,
            pid,
            col_offsets,
            mask,
            n_cols,
            GEMMA,
            0.0,
            False,
            FROM_Y,
        )


_rms_layernorm_backward = triton.jit(
    _rms_layernorm_backward, do_not_specialize = ("n_rows", "rows_per_program")
)
_rms_layernorm_backward = triton.heuristics(
    {
        "GEMMA": lambda args: bool(args["GEMMA"]),
        "LONG_INDEXING": lambda args: bool(args["LONG_INDEXING"]),
        "TRAIN_W": lambda args: bool(args["TRAIN_W"]),
        "FROM_Y": lambda args: bool(args["FROM_Y"]),
    }
)(_rms_layernorm_backward)


@triton.jit
def _gemma_rms_layernorm_forward(
    Y,
    X,
    W,
    r,
    Y_row_stride: tl.constexpr,
    X_row_stride: tl.constexpr,
    W_row_stride: tl.constexpr,
    r_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # Copies google-deepmind/gemma layers.py#L31 and keras-nlp gemma/rms_normalization.py#L33 exactly:
    # essentially all in float32.
    row_idx = tl.program_id(0)
    if LONG_INDEXING:
        row_idx = row_idx.to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx * r_row_stride

    X_row = tl.load(X + col_offsets, mask = mask, other = 0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask = mask, other = 0).to(tl.float32)

    row_var = tl.sum(X_row * X_row, axis = 0) / n_cols
    # Explicit float32 scalar to ensure correct type promotion on HIP/ROCm.
    eps_f32 = tl.full((), eps, tl.float32)
    inv_var = tl.math.rsqrt(row_var + eps_f32)
    tl.store(r, inv_var)
    normed = X_row * inv_var
    output = normed * (W_row + 1.0)

    tl.store(Y + col_offsets, output, mask = mask)


@triton.jit
def _fold_lanes(x, ROWS: tl.constexpr, WARPS: tl.constexpr, HALF: tl.constexpr):
    return tl.sum(tl.reshape(x, (ROWS, WARPS, 2, HALF)), axis = 2)


# ROCm: Triton's tl.sum reduces each 16-lane row of a wavefront with DPP row_shr 8, 4, 2, 1,
# then joins the rows (permlanex16 on RDNA, row_bcast 15 / 31 on CDNA), not CUDA's xor 16 .. 1.
_HIP_ROW_ORDER = tl.constexpr(bool(torch.version.hip))


@triton.jit
def _row_dot_in_hip_row_order(a, b, ROWS: tl.constexpr, WARPS: tl.constexpr):
    # Bit-exact replay of the one-row kernels' tl.sum on AMD (WARPS = BLOCK_SIZE // wavefront):
    # fma(a_l, b_l, a_(l-8) * b_(l-8)), row_shr 4, 2, 1, 16-lane rows by lane bit 4 then 5, warps.
    LANES: tl.constexpr = a.shape[1] // WARPS
    ROWS16: tl.constexpr = LANES // 16
    a = tl.permute(tl.reshape(a, (ROWS, WARPS, ROWS16, 2, 8)), (0, 1, 2, 4, 3))
    b = tl.permute(tl.reshape(b, (ROWS, WARPS, ROWS16, 2, 8)), (0, 1, 2, 4, 3))
    a_lo, a_hi = tl.split(a)
    b_lo, b_hi = tl.split(b)
    acc = tl.fma(a_hi, b_hi, a_lo * b_lo)
    acc = tl.sum(tl.reshape(acc, (ROWS, WARPS, ROWS16, 2, 4)), axis = 3)
    acc = tl.sum(tl.reshape(acc, (ROWS, WARPS, ROWS16, 2, 2)), axis = 3)
    acc = tl.sum(acc, axis = 3)
    if ROWS16 == 4:
        acc = tl.sum(tl.reshape(acc, (ROWS, WARPS, 2, 2)), axis = 3)
    acc = tl.sum(acc, axis = 2)
    if WARPS == 4:
        acc = tl.sum(tl.reshape(acc, (ROWS, 2, 2)), axis = 1)
    return tl.sum(acc, axis = 1)


@triton.jit
def _row_dot_in_cuda_row_order(a, b, ROWS: tl.constexpr, WARPS: tl.constexpr):
    # Bit-exact replay of the one-row kernels' tl.sum (4 warps, 64 <= BLOCK_SIZE <= 128):
    # fma(a_l, b_l, a_(l+16) * b_(l+16)), lane xor 8, 4, 2, 1, warp xor 2, 1; explicit steps only.
    a = tl.permute(tl.reshape(a, (ROWS, WARPS, 2, 16)), (0, 1, 3, 2))
    b = tl.permute(tl.reshape(b, (ROWS, WARPS, 2, 16)), (0, 1, 3, 2))
    a_lo, a_hi = tl.split(a)
    b_lo, b_hi = tl.split(b)
    acc = tl.fma(a_lo, b_lo, a_hi * b_hi)
    acc = _fold_lanes(acc, ROWS, WARPS, 8)
    acc = _fold_lanes(acc, ROWS, WARPS, 4)
    acc = _fold_lanes(acc, ROWS, WARPS, 2)
    acc = _fold_lanes(acc, ROWS, WARPS, 1)
    acc = tl.reshape(acc, (ROWS, WARPS))
    if WARPS == 4:
        acc = tl.sum(tl.reshape(acc, (ROWS, 2, 2)), axis = 1)
    return tl.sum(acc, axis = 1)


@triton.jit
def _row_dot_in_row_kernel_order(a, b, ROWS: tl.constexpr, WARPS: tl.constexpr):
    if _HIP_ROW_ORDER:
        total = _row_dot_in_hip_row_order(a, b, ROWS, WARPS)
    else:
        total = _row_dot_in_cuda_row_order(a, b, ROWS, WARPS)
    return total


@triton.jit(do_not_specialize = ("n_rows",))
def _rms_layernorm_forward_rows(
    Y,
    X,
    W,
    r,
    n_rows,
    Y_row_stride: tl.constexpr,
    X_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ROWS: tl.constexpr,
    WARPS: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
):
    pid = tl.program_id(0)
    if LONG_INDEXING:
        pid = pid.to(tl.int64)
    rows = pid * ROWS + tl.arange(0, ROWS)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row_mask = rows < n_rows
    col_mask = col_offsets < n_cols
    mask = row_mask[:, None] & col_mask[None, :]

    X_rows = tl.load(
        X + rows[:, None] * X_row_stride + col_offsets[None, :], mask = mask, other = 0
    ).to(tl.float32)
    if GEMMA:
        W_row = tl.load(W + col_offsets, mask = col_mask, other = 0).to(tl.float32)
    else:
        W_row = tl.load(W + col_offsets, mask = col_mask, other = 0)

    row_var = _row_dot_in_row_kernel_order(X_rows, X_rows, ROWS, WARPS) / n_cols
    eps_f32 = tl.full((), eps, tl.float32)
    inv_var = tl.math.rsqrt(row_var + eps_f32)
    tl.store(r + rows, inv_var, mask = row_mask)
    normed = X_rows * inv_var[:, None]
    if GEMMA:
        output = normed * (W_row[None, :] + 1.0)
    else:
        normed = normed.to(W_row.dtype)  # Exact copy from HF
        output = normed * W_row[None, :]
    tl.store(Y + rows[:, None] * Y_row_stride + col_offsets[None, :], output, mask = mask)


@triton.jit
def _rms_backward_rows_block(
    dY,
    dY_row_stride: tl.constexpr,
    dX,
    dX_row_stride: tl.constexpr,
    X,
    X_row_stride: tl.constexpr,
    W,
    r,
    rows,
    n_rows,
    n_cols: tl.constexpr,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ROWS: tl.constexpr,
    WARPS: tl.constexpr,
    FROM_Y: tl.constexpr,
):
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row_mask = rows < n_rows
    col_mask = col_offsets < n_cols
    mask = row_mask[:, None] & col_mask[None, :]

    dY_rows = tl.load(
        dY + rows[:, None] * dY_row_stride + col_offsets[None, :], mask = mask, other = 0
    ).to(tl.float32)
    X_rows = tl.load(
        X + rows[:, None] * X_row_stride + col_offsets[None, :], mask = mask, other = 0
    ).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask = col_mask, other = 0).to(tl.float32)

    inv_var = tl.load(r + rows, mask = row_mask, other = 0).to(tl.float32)
    if FROM_Y:
        normed = X_rows / (W_row[None, :] + 1.0 if GEMMA else W_row[None, :])
        normed = tl.where(mask, normed, 0.0)
    else:
        normed = X_rows * inv_var[:, None]

    if GEMMA:
        dY_W = dY_rows * (W_row[None, :] + 1.0)
    else:
        dY_W = dY_rows * W_row[None, :]

    rowsum_dY_normed = _row_dot_in_row_kernel_order(dY_W, normed, ROWS, WARPS)
    # match one-row arithmetic because its fused multiply-add turns -0 into +0 on sm75.
    output = (inv_var / n_cols)[:, None] * (n_cols * dY_W - normed * rowsum_dY_normed[:, None])
    tl.store(dX + rows[:, None] * dX_row_stride + col_offsets[None, :], output, mask = mask)
    # masked rows contribute zero; this dW path is dead unless TRAIN_W.
    if not GEMMA:
        # forward multiplies W by normed rounded to W's dtype.
        normed = normed.to(W.dtype.element_ty).to(tl.float32)
    return tl.sum(dY_rows * normed, axis = 0)


@triton.jit(do_not_specialize = ("n_rows", "blocks_per_program"))
def _rms_layernorm_backward_rows(
    dY,
    dX,
    X,
    W,
    r,
    dW,
    n_rows,
    blocks_per_program,
    dY_row_stride: tl.constexpr,
    dX_row_stride: tl.constexpr,
    X_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ROWS: tl.constexpr,
    WARPS: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
    TRAIN_W: tl.constexpr,
    FROM_Y: tl.constexpr,
):
    pid = tl.program_id(0)
    if LONG_INDEXING:
        pid = pid.to(tl.int64)
    if TRAIN_W:
        dW_acc = tl.zeros((BLOCK_SIZE,), dtype = tl.float32)
        block_start = pid * blocks_per_program
        block_end = tl.minimum(block_start + blocks_per_program, tl.cdiv(n_rows, ROWS))
        for block in range(block_start, block_end):
            dW_acc += _rms_backward_rows_block(
                dY,
                dY_row_stride,
                dX,
                dX_row_stride,
                X,
                X_row_stride,
                W,
                r,
                block * ROWS + tl.arange(0, ROWS),
                n_rows,
                n_cols,
                GEMMA,
                BLOCK_SIZE,
                ROWS,
                WARPS,
                FROM_Y,
            )
        col_offsets = tl.arange(0, BLOCK_SIZE)
        tl.store(dW + pid * n_cols + col_offsets, dW_acc, mask = col_offsets < n_cols)
    else:
        _rms_backward_rows_block(
            dY,
            dY_row_stride,
            dX,
            dX_row_stride,
            X,
            X_row_stride,
            W,
            r,
            pid * ROWS + tl.arange(0, ROWS),
            n_rows,
            n_cols,
            GEMMA,
            BLOCK_SIZE,
            ROWS,
            WARPS,
            FROM_Y,
        )


@triton.jit(do_not_specialize = ("n_programs",))
def _rms_sum_dw_partials(
    partials, dW, n_programs, n_cols, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr
):
    # Fixed tile order, so eager and torch.compile give the same bytes.
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    col_mask = cols < n_cols
    acc = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype = tl.float32)
    for start in tl.range(0, n_programs, BLOCK_ROWS, num_stages = 3):
        rows = start + tl.arange(0, BLOCK_ROWS)
        mask = (rows < n_programs)[:, None] & col_mask[None, :]
        acc += tl.load(partials + rows[:, None] * n_cols + cols[None, :], mask = mask, other = 0)
    tl.store(dW + cols, tl.sum(acc, axis = 0).to(dW.dtype.element_ty), mask = col_mask)


def _cdiv(a, b):
    # triton.cdiv's formula without its call overhead (a ConstexprFunction on recent Triton).
    return (a + b - 1) // b


# num_warps per (compute capability, n_cols), replacing calculate_settings' where a sweep (fp16 + bf16 on
# sm_80+, fp16 on T4; 2k and 16k rows) found a width faster outside the run's A/A band in some cell and never
# slower in any, at least 3% on the geometric mean, with max error vs fp64 no worse than the default's; every
# entry then won again against main on torch 2.14.1 (same GPU tier, interleaved, outside A/A, never slower).
# _NUM_WARPS: one-row forward + frozen-W backward; _DW_NUM_WARPS: the dW backward.
_NUM_WARPS = {
    ((7, 5), 1024): 8,
    ((7, 5), 2048): 16,
    ((7, 5), 2560): 16,
    ((7, 5), 4096): 32,
    ((7, 5), 5120): 32,
    ((7, 5), 8192): 32,
    ((9, 0), 5120): 4,
}
_DW_NUM_WARPS = {
    ((8, 9), 2560): 4,
    ((8, 9), 4096): 2,
    ((12, 0), 1024): 8,
    ((12, 0), 2560): 4,
    ((12, 0), 5120): 8,
    ((12, 0), 8192): 4,
}


def _arch_settings(n_cols, device, dw):
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    table = _DW_NUM_WARPS if dw else _NUM_WARPS
    return BLOCK_SIZE, norm_num_warps(table, n_cols, num_warps, device)


_cached_arch_settings = functools.lru_cache(maxsize = None)(_arch_settings)


def _settings(
    n_cols,
    device = None,
    dw = False,
):
    # Cached per (width, device) for eager calls; tracing and symbolic (unhashable) widths skip it.
    if torch.compiler.is_compiling() or type(n_cols) is not int:
        return _arch_settings(n_cols, device, dw)
    return _cached_arch_settings(n_cols, device, dw)


def _launch(wrap, kernel, grid, args, n_tensors, constexprs, device, **options):
    # Eager CUDA skips Triton's arg binding (triton_launch.py); traced / non-Triton keep kernel[grid].
    # is_compiling first: Dynamo must not read (and guard on) the mutable _ENABLED.
    if (
        not torch.compiler.is_compiling()
        and triton_launch._ENABLED
        and wrap is _eager_kernel
        and device.type == "cuda"
    ):
        fn = kernel
        if isinstance(kernel, triton.runtime.autotuner.Heuristics):
            # What Heuristics.run does; these heuristics only read their own constexpr.
            fn, constexprs = kernel.fn, dict(constexprs)
            for name, heuristic in kernel.values.items():
                constexprs[name] = heuristic(constexprs)
        if isinstance(fn, triton.runtime.jit.JITFunction):
            launch(fn, grid, args, n_tensors, constexprs, device.index, **options)
            return
    wrap(kernel)[grid](*args, **constexprs, **options)


# Off before Triton 3.6 (slower backward). ROCm replays the DPP order; the self-check gates it per arch.
def _triton_at_least(major, minor):
    try:
        return tuple(int(v) for v in triton.__version__.split(".")[:2]) >= (major, minor)
    except Exception:
        return False


_MULTIROW = os.environ.get("UNSLOTH_RMSNORM_MULTIROW", "1") != "0" and _triton_at_least(3, 6)
_MULTIROW_ELEMENTS = 4096
_MULTIROW_NUM_WARPS = 4


@functools.lru_cache(maxsize = None)
def _hip_wavefront(index):
    # Lanes per wavefront the one-row kernels reduce over: 32 on RDNA, 64 on CDNA; None if unknown.
    try:
        with torch_gpu_device(torch.device("cuda", index)):
            lanes = int(triton.runtime.driver.active.get_current_target().warp_size)
    except Exception:
        try:
            lanes = int(torch.cuda.get_device_properties(index).warp_size)
        except Exception:
            return None
    return lanes if lanes in (32, 64) else None


def _multirow_settings(n_cols, device = None):
    # Only widths 33..128 (one element per lane) can replay the one-row order; others stay one-row.
    if not _MULTIROW:
        return None
    BLOCK_SIZE, num_warps = _settings(n_cols)
    if num_warps != 4 or not (64 <= BLOCK_SIZE <= 128):
        return None
    if torch.version.hip:
        index = device.index if device is not None and device.index is not None else None
        lanes = _hip_wavefront(torch.cuda.current_device() if index is None else index)
        if lanes is None:
            return None
        return (
            BLOCK_SIZE,
            _MULTIROW_ELEMENTS // BLOCK_SIZE,
            BLOCK_SIZE // lanes,
            _MULTIROW_NUM_WARPS,
        )
    return BLOCK_SIZE, _MULTIROW_ELEMENTS // BLOCK_SIZE, BLOCK_SIZE // 32, _MULTIROW_NUM_WARPS


_MULTIROW_CHECKED = {}


def _multirow_disable(reason):
    global _MULTIROW
    if _MULTIROW:
        _MULTIROW = False
        warnings.warn(
            f"Unsloth: narrow-row RMSNorm kernels disabled ({reason}); using one row per program."
        )


def _multirow_must_raise(error, wrap):
    # Never fall back while torch.compile traces, nor on OOM or dynamo / inductor errors.
    return (
        wrap is not _eager_kernel
        or isinstance(error, torch.cuda.OutOfMemoryError)
        or type(error).__module__.startswith(("torch._dynamo", "torch._inductor"))
        or torch.compiler.is_compiling()
    )


def _bits(t):
    return t.view({2: torch.int16, 4: torch.int32}[t.element_size()])


def _multirow_self_check(device, dtype, W_dtype, n_cols, eps, gemma, multirow):
    from torch.utils._python_dispatch import _disable_current_modes
    with _disable_current_modes(), torch.no_grad(), torch_gpu_device(device):
        g = torch.Generator(device = device).manual_seed(3407)
        shape = (2 * multirow[1] + 3, n_cols)
        X = torch.randn(shape, device = device, generator = g)
        X = X * torch.exp2(torch.randint(-12, 13, shape, device = device, generator = g).float())
        dY = torch.randn(shape, device = device, generator = g)
        X[0], dY[0, ::2] = 0, 0  # all-zero row: signed zeros in dX
        X, dY = X.to(dtype), dY.to(dtype)
        W = torch.randn(n_cols, device = device, generator = g).to(W_dtype)
        results = []
        for rows in (False, multirow):
            Y, r = _rms_forward(X, W, eps, gemma, _eager_kernel, rows)
            dX = torch.empty_like(dY)
            _rms_backward(dY, dX, X, W, r, eps, gemma, _eager_kernel, rows)
            results.append((Y, r, dX))
        return all(torch.equal(_bits(a), _bits(b)) for a, b in zip(*results))


def _multirow_checked(X, W, eps, gemma):
    n_cols = X.shape[1]
    multirow = _multirow_settings(n_cols, X.device)
    if multirow is None:
        return None
    key = (X.device, X.dtype, W.dtype, int(n_cols), float(eps), gemma)
    verdict = _MULTIROW_CHECKED.get(key)
    if verdict is None:
        if X.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return None  # check on a later uncaptured call
        try:
            verdict = _multirow_self_check(X.device, X.dtype, W.dtype, n_cols, eps, gemma, multirow)
            reason = f"self-check mismatch for {key}"
        except torch.cuda.OutOfMemoryError:
            raise
        except Exception as error:
            # Its launches re-raise while torch.compile traces; this call then runs one row.
            verdict, reason = False, f"self-check failed for {key}: {error!r}"
        _MULTIROW_CHECKED[key] = verdict
        if not verdict:
            _multirow_disable(reason)
    return multirow if verdict and _MULTIROW else None


# Covers masked lanes past the last row: a block of columns, or ROWS rows in the multirow kernels.
_INDEX_MARGIN = 1 << 20


def _rms_forward(
    X,
    W,
    eps,
    gemma,
    wrap,
    multirow = None,
):
    # multirow: None picks (self-checked), False forces one row, settings force multi-row.
    n_rows, n_cols = X.shape
    device = X.device
    Y = torch.empty((n_rows, n_cols), dtype = X.dtype, device = device)
    r = torch.empty(n_rows, dtype = torch.float32, device = device)
    if multirow is None:
        multirow = _multirow_checked(X, W, eps, gemma)
    long = long_indexing(X, Y, block = _INDEX_MARGIN)
    if multirow:
        BLOCK_SIZE, ROWS, WARPS, num_warps = multirow
        try:
            _launch(
                wrap,
                _rms_layernorm_forward_rows,
                ((n_rows + ROWS - 1) // ROWS,),
                (Y, X, W, r, n_rows),
                4,
                dict(
                    Y_row_stride = Y.stride(0),
                    X_row_stride = X.stride(0),
                    n_cols = n_cols,
                    eps = eps,
                    GEMMA = gemma,
                    BLOCK_SIZE = BLOCK_SIZE,
                    ROWS = ROWS,
                    WARPS = WARPS,
                    # int32 rows measured slower only for the Gemma multi-row forward: keep main's int64.
                    LONG_INDEXING = long or gemma,
                ),
                device,
                num_warps = num_warps,
                enable_fp_fusion = True,
            )
            return Y, r
        except Exception as error:
            if _multirow_must_raise(error, wrap):
                raise
            _multirow_disable(f"launch failed: {error!r}")
    BLOCK_SIZE, num_warps = _settings(n_cols, device)
    _launch(
        wrap,
        _gemma_rms_layernorm_forward if gemma else _rms_layernorm_forward,
        (n_rows,),
        (Y, X, W, r),
        4,
        dict(
            Y_row_stride = Y.stride(0),
            X_row_stride = X.stride(0),
            W_row_stride = W.stride(0),
            r_row_stride = r.stride(0),
            n_cols = n_cols,
            eps = eps,
            LONG_INDEXING = long,
            BLOCK_SIZE = BLOCK_SIZE,
        ),
        device,
        num_warps = num_warps,
        enable_fp_fusion = True,
    )
    return Y, r


_DW_PROGRAMS_PER_SM = 4


@functools.lru_cache(maxsize = None)
def _sm_count(device):
    try:
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    except Exception:
        return 128


@functools.lru_cache(maxsize = None)
def _max_sm_threads(device):
    try:
        return int(torch.cuda.get_device_properties(device).max_threads_per_multi_processor)
    except Exception:
        return 0


def _dw_split(units, max_programs):
    per_program = max(1, _cdiv(units, max(1, min(units, max_programs))))
    return max(1, _cdiv(units, per_program)), per_program


def _dw_launch(units, device):
    return _dw_split(units, _sm_count(device) * _DW_PROGRAMS_PER_SM)


@functools.lru_cache(maxsize = None)
def _dw_row_config(device, n_cols):
    # Cached (host bound). 64-warp SMs, <= 16 elems/lane: cap registers at 64 so all programs stay resident.
    BLOCK_SIZE, num_warps = _settings(n_cols, device, dw = True)
    per_sm, options = _DW_PROGRAMS_PER_SM, {}
    if (
        device.type == "cuda"
        and not torch.version.hip
        and BLOCK_SIZE <= 512 * num_warps
        and _max_sm_threads(device) >= 2048
    ):
        per_sm, options = max(1, 32 // num_warps), {"maxnreg": 64}
    return BLOCK_SIZE, num_warps, _sm_count(device) * per_sm, options


def _rms_backward(
    dY,
    dX,
    X,
    W,
    r,
    eps,
    gemma,
    wrap,
    multirow = None,
    train_w = False,
    from_y = False,
):
    n_rows, n_cols = dY.shape
    device = dY.device
    if multirow is None:
        multirow = _multirow_checked(X, W, eps, gemma)
    long = long_indexing(dY, dX, X, block = _INDEX_MARGIN)
    partials = None
    if multirow:
        BLOCK_SIZE, ROWS, WARPS, num_warps = multirow
        programs, per_program = _cdiv(n_rows, ROWS), 1
        if train_w:
            programs, per_program = _dw_launch(programs, device)
            partials = torch.empty((programs, n_cols), dtype = torch.float32, device = device)
        try:
            _launch(
                wrap,
                _rms_layernorm_backward_rows,
                (programs,),
                (dY, dX, X, W, r, r if partials is None else partials, n_rows, per_program),
                6,
                dict(
                    dY_row_stride = dY.stride(0),
                    dX_row_stride = dX.stride(0),
                    X_row_stride = X.stride(0),
                    n_cols = n_cols,
                    eps = eps,
                    GEMMA = gemma,
                    BLOCK_SIZE = BLOCK_SIZE,
                    ROWS = ROWS,
                    WARPS = WARPS,
                    LONG_INDEXING = long,
                    TRAIN_W = train_w,
                    FROM_Y = from_y,
                ),
                device,
                num_warps = num_warps,
                enable_fp_fusion = True,
            )
        except Exception as error:
            if _multirow_must_raise(error, wrap):
                raise
            _multirow_disable(f"launch failed: {error!r}")
        else:
            return _rms_sum_partials(partials, W, wrap)
    programs, per_program, options = n_rows, 1, {}
    if train_w:
        BLOCK_SIZE, num_warps, max_programs, options = _dw_row_config(device, int(n_cols))
        programs, per_program = _dw_split(n_rows, max_programs)
        partials = torch.empty((programs, n_cols), dtype = torch.float32, device = device)
    else:
        BLOCK_SIZE, num_warps = _settings(n_cols, device)
    _launch(
        wrap,
        _rms_layernorm_backward,
        (programs,),
        (dY, dX, X, W, r, r if partials is None else partials, n_rows, per_program),
        6,
        dict(
            dY_row_stride = dY.stride(0),
            dX_row_stride = dX.stride(0),
            X_row_stride = X.stride(0),
            W_row_stride = W.stride(0),
            r_row_stride = r.stride(0),
            n_cols = n_cols,
            eps = eps,
            GEMMA = gemma,
            LONG_INDEXING = long,
            BLOCK_SIZE = BLOCK_SIZE,
            TRAIN_W = train_w,
            FROM_Y = from_y,
        ),
        device,
        num_warps = num_warps,
        **options,
        enable_fp_fusion = True,
    )
    return _rms_sum_partials(partials, W, wrap)


def _rms_sum_partials(partials, W, wrap):
    if partials is None:
        return None
    programs, n_cols = partials.shape
    dW = torch.empty(n_cols, dtype = W.dtype, device = partials.device)
    _launch(
        wrap,
        _rms_sum_dw_partials,
        (_cdiv(n_cols, 64),),
        (partials, dW, programs, n_cols),
        2,
        dict(BLOCK_ROWS = 64, BLOCK_COLS = 64),
        partials.device,
        enable_fp_fusion = True,
    )
    return dW


_eager_kernel = lambda kernel: kernel

# Opt-in: save the output Y (which LoRA_QKV / LoRA_MLP already hold) instead of the input X and
# recompute normed = Y / W in backward. Saves one T x D activation per norm; dX is no longer bitwise.
_SAVE_OUTPUT = os.environ.get("UNSLOTH_RMSNORM_SAVE_OUTPUT", "0") == "1"


def _save_output_ok(W, gemma, dtype):
    # Y / W needs |W| (|1 + W| for Gemma) clear of 0 and fp16 Y not subnormal. Cached per weight version.
    if torch.is_inference(W):
        # Inference tensors have no version counter to key the cache on: save X.
        return False
    key = (W._version, W.data_ptr(), gemma, dtype)
    cached = getattr(W, "_unsloth_save_output", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    if W.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        # .item() would sync inside CUDA graph capture: save X for this call, check eagerly later.
        return False
    with torch.no_grad():
        w = W.float() + 1.0 if gemma else W.float()
        ok = bool((w.isfinite().all() & (w.abs().amin() >= 16 * torch.finfo(dtype).tiny)).item())
    try:
        W._unsloth_save_output = (key, ok)
    except Exception:
        pass
    return ok


class Fast_RMS_Layernorm(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        X: torch.Tensor,
        W: torch.Tensor,
        eps: float,
        gemma: bool = False,
        save_output: bool = False,
        reuse_grad: bool = False,
    ):
        shape = X.shape
        dim: int = shape[-1]
        X = X.reshape(-1, dim).contiguous()
        # kernels read W at unit stride, and this W is the one saved for backward.
        W = W.contiguous()
        with torch_gpu_device(X.device):
            Y, r = _rms_forward(X, W, eps, gemma, _eager_kernel)
        ctx.eps = eps
        ctx.GEMMA = gemma
        ctx.reuse_grad = reuse_grad
        Y = Y.view(*shape)
        # save_output: the caller guarantees nothing writes into Y (an untracked Triton write would
        # corrupt dX silently). Only frozen W: a trained W changes every step.
        ctx.FROM_Y = (
            save_output
            and _SAVE_OUTPUT
            and ctx.needs_input_grad[0]
            and not ctx.needs_input_grad[1]
            and _save_output_ok(W, gemma, Y.dtype)
        )
        ctx.save_for_backward(Y if ctx.FROM_Y else X, W, r)
        if ctx.FROM_Y:
            # LoRA_QKV and LoRA_MLP use this marker to preserve Y and its tiled views.
            Y._unsloth_rmsnorm_saved = True
            if Y._base is not None:
                Y._base._unsloth_rmsnorm_saved = True
        return Y

    @staticmethod
    def backward(ctx, dY: torch.Tensor):
        shape = dY.shape
        dim: int = shape[-1]
        dY = dY.reshape(-1, dim).contiguous()
        X, W, r = ctx.saved_tensors
        if ctx.FROM_Y:
            # The saved Y keeps the caller's shape; a saved X is already 2D.
            X = X.view(-1, dim)
        # Autograd may share dY with other nodes or the caller, so dX gets its own buffer.
        # reuse_grad is for call sites whose output only feeds layers that return a fresh grad
        # (pre-norm decoder norms): there dX overwrites dY and saves one activation.
        dX = dY if ctx.reuse_grad and not ctx.GEMMA else torch.empty_like(dY)
        with torch_gpu_device(dY.device):
            dW = _rms_backward(
                dY,
                dX,
                X,
                W,
                r,
                ctx.eps,
                ctx.GEMMA,
                _eager_kernel,
                train_w = ctx.needs_input_grad[1],
                from_y = ctx.FROM_Y,
            )
        dX = dX.view(*shape)
        return dX, dW, None, None, None, None


# compiled graphs use these ops with the same kernels as the Function.
_TRACEABLE = hasattr(torch.library, "triton_op") and hasattr(torch.library, "wrap_triton")


def _bf16_traceable():
    # Dynamo cannot trace bf16 Triton without native bf16 (T4); any visible GPU may hold a layer.
    try:
        if torch.version.hip:
            return True
        n = torch.cuda.device_count()
        return n > 0 and all(torch.cuda.get_device_capability(i)[0] >= 8 for i in range(n))
    except Exception:
        return False


_BF16_TRACEABLE = _TRACEABLE and _bf16_traceable()


def _tag_compile_cache(path):
    # Inductor's FX cache keys a triton_op without its source; key on the file so upgrades miss.
    config = getattr(torch.compiler, "config", None)
    if config is None or not hasattr(config, "cache_key_tag"):
        return
    with open(path, "rb") as file:
        tag = f"unsloth/{os.path.basename(path)}:{hashlib.sha256(file.read()).hexdigest()[:16]}"
    tags = [t for t in config.cache_key_tag.split(",") if t]
    if tag not in tags:
        config.cache_key_tag = ",".join(tags + [tag])


def _traced_kernel(kernel):
    # wrap_triton needs the JITFunction under triton.heuristics; callers pass its constexprs.
    if isinstance(kernel, triton.runtime.autotuner.Heuristics):
        kernel = kernel.fn
    return torch.library.wrap_triton(kernel)


if _TRACEABLE:

    @torch.library.triton_op("unsloth::rms_layernorm", mutates_args = ())
    def _rms_layernorm_op(
        X: torch.Tensor, W: torch.Tensor, eps: float, gemma: bool
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        # eager launches outside compiled graphs need X's device made current.
        with torch_gpu_device(X.device):
            return _rms_forward(X, W, eps, gemma, _traced_kernel)

    @torch.library.triton_op("unsloth::rms_layernorm_backward", mutates_args = ())
    def _rms_layernorm_backward_op(
        dY: torch.Tensor,
        X: torch.Tensor,
        W: torch.Tensor,
        r: torch.Tensor,
        eps: float,
        gemma: bool,
        train_w: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        dX = torch.empty_like(dY)
        with torch_gpu_device(dY.device):
            dW = _rms_backward(
                dY,
                dX,
                X,
                W,
                r,
                eps,
                gemma,
                _traced_kernel,
                train_w = train_w,
            )
        # empty dW represents a frozen weight because ops return tensors only.
        return dX, dW if train_w else W.new_empty(0)

    def _rms_setup_context(ctx, inputs, output):
        X, W, eps, gemma = inputs
        ctx.eps, ctx.gemma = eps, gemma
        ctx.save_for_backward(X, W, output[1])

    def _rms_layernorm_op_backward(ctx, dY, dr):
        X, W, r = ctx.saved_tensors
        train_w = ctx.needs_input_grad[1]
        dX, dW = torch.ops.unsloth.rms_layernorm_backward(
            dY.contiguous(), X, W, r, ctx.eps, ctx.gemma, train_w
        )
        return dX, dW if train_w else None, None, None

    _rms_layernorm_op.register_autograd(
        _rms_layernorm_op_backward, setup_context = _rms_setup_context
    )
    _tag_compile_cache(__file__)


@torch.compiler.disable
def _fast_rms_layernorm_untraced(
    X,
    W,
    eps,
    gemma,
    save_output = False,
    reuse_grad = False,
):
    return Fast_RMS_Layernorm.apply(X, W, eps, gemma, save_output, reuse_grad)


def fast_rms_layernorm(
    layernorm,
    X: torch.Tensor,
    gemma: bool = False,
    save_output: bool = False,
    reuse_grad: bool = False,
):
    W: torch.Tensor = layernorm.weight
    eps: float = (
        layernorm.variance_epsilon if hasattr(layernorm, "variance_epsilon") else layernorm.eps
    )
    if not torch.compiler.is_compiling():
        return Fast_RMS_Layernorm.apply(X, W, eps, gemma, save_output, reuse_grad)
    if (
        not _TRACEABLE
        or X.device.type != "cuda"
        or (X.dtype == torch.bfloat16 and not _BF16_TRACEABLE)
    ):
        return _fast_rms_layernorm_untraced(X, W, eps, gemma, save_output, reuse_grad)
    shape = X.shape
    Y, _ = torch.ops.unsloth.rms_layernorm(
        X.reshape(-1, shape[-1]).contiguous(), W.contiguous(), eps, gemma
    )
    return Y.view(shape)


from transformers.models.llama.modeling_llama import LlamaRMSNorm


class Unsloth_LlamaRMSNorm(LlamaRMSNorm):
    def forward(self, X):
        return fast_rms_layernorm(self, X, gemma = False)


try:
    from transformers.models.mllama.modeling_mllama import MllamaTextRMSNorm
    class Unsloth_MllamaTextRMSNorm(MllamaTextRMSNorm):
        def forward(self, X):
            return fast_rms_layernorm(self, X, gemma = False)


except (ImportError, AttributeError):
    pass


def patch_rms_layernorm():
    import transformers.models.llama.modeling_llama

    transformers.models.llama.modeling_llama.LlamaRMSNorm = Unsloth_LlamaRMSNorm
    try:
        import transformers.models.mllama.modeling_mllama
        transformers.models.mllama.modeling_mllama.MllamaTextRMSNorm = Unsloth_MllamaTextRMSNorm
    except (ImportError, AttributeError, NameError):
        pass
    return


def unpatch_rms_layernorm():
    import transformers.models.llama.modeling_llama

    transformers.models.llama.modeling_llama.LlamaRMSNorm = LlamaRMSNorm
    try:
        import transformers.models.mllama.modeling_mllama
        transformers.models.mllama.modeling_mllama.MllamaTextRMSNorm = MllamaTextRMSNorm
    except (ImportError, AttributeError, NameError):
        pass
    return


def test_rms_layernorm(
    dim = 1024,
    eps = 1e-5,
    dtype = torch.float16,
    bsz = 21,
    random_state = 3407,
    seqlen = 3341,
):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    layernorm = LlamaRMSNorm((dim,), eps = eps).to("cuda")
    torch.cuda.manual_seed(random_state)
    torch.manual_seed(random_state)
    torch.nn.init.uniform_(layernorm.weight)
    X = torch.randn((bsz, seqlen, dim), dtype = dtype, device = "cuda")
    XX = X.clone()
    X.requires_grad_(True)
    XX.requires_grad_(True)
    Y = layernorm(X)
    YY = torch.randn((bsz, seqlen, dim), dtype = dtype, device = "cuda", requires_grad = True)
    Y.backward(YY)
    correct_grad = X.grad.clone()
    Y = fast_rms_layernorm(layernorm, XX)
    Y.backward(YY)
    assert torch.amax(correct_grad - XX.grad).item() <= 0.05


def testing_suite_layernorm():
    for dim in [512, 1024, 2048]:
        for dtype in [torch.float16, torch.bfloat16]:
            with torch.autocast(device_type = "cuda", dtype = dtype):
                for seqlen in [3341, 2048, 349]:
                    for random_state in [3407, 42]:
                        test_rms_layernorm(
                            dim = dim,
                            eps = 1e-5,
                            dtype = dtype,
                            bsz = 21,
                            random_state = random_state,
                            seqlen = seqlen,
                        )
