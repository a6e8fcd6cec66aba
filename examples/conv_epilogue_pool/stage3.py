"""Stage 3: past torch.compile on conv + epilogue + pooling: the epilogue and the pooling on the conv's accumulator.

What torch.compile does with this problem (run_benchmark explain=true): the convolution in cuDNN, then one fused
Triton kernel for x - 0.5, hardswish, the 2 x 2 max and mish. So the conv output (1.04 GB in fp32 at the KernelBench
size) is written by cuDNN and read back by Inductor's kernel: 2 GB of the ~2.6 GB the call moves.

Two paths, both here, picked per shape by PLANS (filled from the GPU sweep, benchmarks/gpu_parts/conv.sh):
- "igemm" (the default): the convolution as an implicit GEMM in Triton, out[co, window] = W[co, (kh, kw, ci)] @
  X[(kh, kw, ci), pixel], with FOUR accumulators per program, one per position of the 2 x 2 pooling window: the
  weight tile is loaded once per K step and feeds four tl.dot, then bias, - subtract, hardswish, the max of the four
  (NaN-propagating, as max_pool2d) and mish run in registers and only the pooled output is stored. The conv output
  never exists. The weights are re-laid once per call as [C_out, K, K, C_in] (a 295 KB Triton copy) so a weight tile
  is K-contiguous; with channels_last the input is converted to NHWC first (one copy, as cuDNN's channels-last
  conv needs too) so the pixel tiles are K-contiguous as well, which Hopper's wgmma wants for 32-bit operands.
  tl.dot runs in TF32: the precision cuDNN gives this conv by default (torch.backends.cudnn.allow_tf32 = True), so
  eager and torch.compile are TF32 too (the sidecar's tolerance says so).
- "cudnn": the convolution in cuDNN (channels-last when the plan says so) and ONE Triton kernel that reads the conv
  output once for the whole epilogue and pooling: torch.compile's own plan, as a baseline the sweep can pick.
Pooling windows other than 2 x 2 take the cudnn path.
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

# (C_in, C_out, kernel size, pool size) -> plan: THIS is the table the sweep's winner goes into
# (benchmarks/gpu_parts/conv.sh prints "adopt: PLANS[...] = {...}"). Keys: path ("igemm" | "cudnn"), channels_last,
# and for igemm a pinned tile (BLOCK_CO, BLOCK_WIN, BLOCK_CI, num_warps, num_stages); without one, igemm autotunes
# over IGEMM_CONFIGS. Not measured on a GPU yet: every shape takes DEFAULT_PLAN.
PLANS: dict[tuple[int, int, int, int], dict] = {}
DEFAULT_PLAN = {"path": "igemm", "channels_last": True}

# BLOCK_CO x BLOCK_WIN output tile (channels x pooling windows, four accumulators), BLOCK_CI input channels per K step.
# Shared memory per stage: (BLOCK_CO + 4 BLOCK_WIN) x BLOCK_CI x 4 bytes (48 KiB at 128 x 64 x 32).
_IGEMM = [triton.Config({"BLOCK_CO": co, "BLOCK_WIN": win, "BLOCK_CI": ci}, num_warps=w, num_stages=s)
          for co, win, ci, w, s in ((128, 64, 32, 8, 3), (128, 32, 32, 4, 3), (64, 64, 32, 4, 3),
                                    (64, 128, 32, 8, 3), (128, 64, 16, 8, 4), (64, 64, 16, 4, 4))]
IGEMM_CONFIGS = [triton.Config({"BLOCK_CO": 16, "BLOCK_WIN": 64, "BLOCK_CI": 16}, num_warps=4)] if INTERPRET else _IGEMM
_EPI = [triton.Config({"BLOCK_C": c, "BLOCK_PW": w}, num_warps=nw) for c, w, nw in
        ((32, 32, 4), (64, 32, 4), (32, 64, 4), (64, 64, 8), (128, 32, 8))]
EPI_CONFIGS = [triton.Config({"BLOCK_C": 64, "BLOCK_PW": 64}, num_warps=4)] if INTERPRET else _EPI


@triton.jit
def _hardswish(v):
    return v * tl.minimum(tl.maximum(v + 3.0, 0.0), 6.0) / 6.0


@triton.jit
def _mish(p):
    # p * tanh(softplus(p)) with tanh(log1p(t)) = t (t + 2) / (t (t + 2) + 2), t = exp(p): only exp, no overflow;
    # softplus is p itself above 20 (PyTorch's threshold), where tanh is 1 in fp32.
    t = tl.exp(tl.minimum(p, 20.0))
    q = t * (t + 2.0)
    return tl.where(p > 20.0, p, p * (q / (q + 2.0)))


@triton.jit
def weight_relayout_kernel(w_ptr, wt_ptr, C_in, KK: tl.constexpr, BLOCK_CI: tl.constexpr, BLOCK_KK: tl.constexpr):
    # wt[co, kk, ci] = w[co, ci, kk] (kk = kh * K + kw), one output channel per program: a [BLOCK_CI, KK] tile is read
    # as it lies (rows of KK) and written transposed (rows of C_in), so a K step's weight tile is contiguous in ci.
    co = tl.program_id(0).to(tl.int64)
    kk = tl.arange(0, BLOCK_KK)
    for c0 in range(0, C_in, BLOCK_CI):
        ci = c0 + tl.arange(0, BLOCK_CI)
        m = (ci < C_in)[:, None] & (kk < KK)[None, :]
        tile = tl.load(w_ptr + (co * C_in + ci[:, None]) * KK + kk[None, :], mask=m)
        tl.store(wt_ptr + co * KK * C_in + kk[None, :] * C_in + ci[:, None], tile, mask=m)


@triton.jit
def conv_pool_igemm_kernel(x_ptr, wt_ptr, b_ptr, out_ptr, n_windows, C_in, C_out, PH, PW,
                           stride_xn, stride_xc, stride_xh, stride_xw, stride_on, stride_oc, stride_oh, stride_ow,
                           sub, K: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_WIN: tl.constexpr,
                           BLOCK_CI: tl.constexpr, PRECISION: tl.constexpr):
    win = tl.program_id(0).to(tl.int64) * BLOCK_WIN + tl.arange(0, BLOCK_WIN)  # pooling windows, over (n, ph, pw)
    win_ok = win < n_windows
    pw = win % PW
    t = win // PW
    ph = t % PH
    n = t // PH
    co = tl.program_id(1).to(tl.int64) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    co_ok = co < C_out
    ci = tl.arange(0, BLOCK_CI)
    top_left = n * stride_xn + (2 * ph) * stride_xh + (2 * pw) * stride_xw  # the window's first conv pixel's input
    acc00 = tl.zeros((BLOCK_CO, BLOCK_WIN), tl.float32)
    acc01 = tl.zeros((BLOCK_CO, BLOCK_WIN), tl.float32)
    acc10 = tl.zeros((BLOCK_CO, BLOCK_WIN), tl.float32)
    acc11 = tl.zeros((BLOCK_CO, BLOCK_WIN), tl.float32)
    n_cblk = tl.cdiv(C_in, BLOCK_CI)
    w_rows = wt_ptr + co[:, None] * (K * K * C_in)
    for step in range(0, K * K * n_cblk):  # one (kh, kw, channel block) per step: a single loop to pipeline
        kk = step // n_cblk
        c = (step - kk * n_cblk) * BLOCK_CI + ci
        c_ok = c < C_in
        kh = kk // K
        kw = kk - kh * K
        wv = tl.load(w_rows + kk * C_in + c[None, :], mask=co_ok[:, None] & c_ok[None, :], other=0.0)
        src = x_ptr + (top_left[None, :] + c.to(tl.int64)[:, None] * stride_xc + kh * stride_xh + kw * stride_xw)
        m = c_ok[:, None] & win_ok[None, :]
        acc00 = tl.dot(wv, tl.load(src, mask=m, other=0.0), acc00, input_precision=PRECISION)
        acc01 = tl.dot(wv, tl.load(src + stride_xw, mask=m, other=0.0), acc01, input_precision=PRECISION)
        acc10 = tl.dot(wv, tl.load(src + stride_xh, mask=m, other=0.0), acc10, input_precision=PRECISION)
        acc11 = tl.dot(wv, tl.load(src + stride_xh + stride_xw, mask=m, other=0.0), acc11, input_precision=PRECISION)
    shift = tl.load(b_ptr + co, mask=co_ok, other=0.0).to(tl.float32)[:, None] - sub
    best = tl.maximum(_hardswish(acc00 + shift), _hardswish(acc01 + shift), propagate_nan=tl.PropagateNan.ALL)
    best = tl.maximum(best, _hardswish(acc10 + shift), propagate_nan=tl.PropagateNan.ALL)
    best = tl.maximum(best, _hardswish(acc11 + shift), propagate_nan=tl.PropagateNan.ALL)
    dst = out_ptr + (n * stride_on + ph * stride_oh + pw * stride_ow)[None, :] + co[:, None] * stride_oc
    tl.store(dst, _mish(best).to(out_ptr.dtype.element_ty), mask=co_ok[:, None] & win_ok[None, :])


conv_pool_igemm_tuned = triton.autotune(configs=IGEMM_CONFIGS, key=["C_in", "C_out", "K", "n_windows"])(
    conv_pool_igemm_kernel)


@triton.autotune(configs=EPI_CONFIGS, key=["C", "PW", "n_rows"])
@triton.jit
def pool_epilogue_kernel(y_ptr, out_ptr, n_rows, PH, PW, C, stride_yn, stride_yc, stride_yh, stride_yw, sub,
                         P: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_PW: tl.constexpr):
    # The cudnn path: the conv output read once, the pooled result written once. A [BLOCK_C, BLOCK_PW] tile of one
    # pooled row: loads run along C when the conv output is channels-last (stride_yc == 1) and along W otherwise;
    # the stores run along PW (the output is NCHW), Triton transposes in between.
    row = tl.program_id(0).to(tl.int64)  # (n, ph)
    n = row // PH
    ph = row - n * PH
    c = tl.program_id(1).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    pw = tl.program_id(2).to(tl.int64) * BLOCK_PW + tl.arange(0, BLOCK_PW)
    m = (c < C)[:, None] & (pw < PW)[None, :]
    base = y_ptr + n * stride_yn + (ph * P) * stride_yh + c[:, None] * stride_yc + (pw * P)[None, :] * stride_yw
    best = tl.full((BLOCK_C, BLOCK_PW), float("-inf"), tl.float32)
    for dy in tl.static_range(P):
        for dx in tl.static_range(P):
            v = tl.load(base + dy * stride_yh + dx * stride_yw, mask=m, other=0.0).to(tl.float32)
            best = tl.maximum(best, _hardswish(v - sub), propagate_nan=tl.PropagateNan.ALL)
    dst = out_ptr + ((n * C + c[:, None]) * PH + ph) * PW + pw[None, :]
    tl.store(dst, _mish(best).to(out_ptr.dtype.element_ty), mask=m)


def plan_for(C_in: int, C_out: int, K: int, P: int) -> dict:
    """The plan of one shape: PLANS' pin, else DEFAULT_PLAN; a pooling other than 2 x 2 always takes cudnn."""
    plan = PLANS.get((C_in, C_out, K, P), DEFAULT_PLAN)
    return plan if P == 2 or plan["path"] == "cudnn" else {**plan, "path": "cudnn"}


def _igemm(x, weight, bias, subtract, plan):
    N, C_in, H, W = x.shape
    C_out, _, K, _ = weight.shape
    PH, PW = (H - K + 1) // 2, (W - K + 1) // 2
    out = torch.empty((N, C_out, PH, PW), dtype=x.dtype, device=x.device)
    n_windows = N * PH * PW
    if out.numel() == 0:
        return out
    w = weight.contiguous()
    wt = torch.empty((C_out, K, K, C_in), dtype=w.dtype, device=w.device)
    weight_relayout_kernel[(C_out,)](w, wt, C_in, KK=K * K, BLOCK_CI=min(64, triton.next_power_of_2(C_in)),
                                     BLOCK_KK=triton.next_power_of_2(K * K))
    args = (x, wt, bias.contiguous(), out, n_windows, C_in, C_out, PH, PW, *x.stride(), *out.stride(), float(subtract))
    tile = {k: plan[k] for k in ("BLOCK_CO", "BLOCK_WIN", "BLOCK_CI") if k in plan}
    if len(tile) == 3 and not INTERPRET:  # pinned by the sweep: no autotuning
        grid = (triton.cdiv(n_windows, tile["BLOCK_WIN"]), triton.cdiv(C_out, tile["BLOCK_CO"]))
        conv_pool_igemm_kernel[grid](*args, K=K, PRECISION="tf32", num_warps=plan.get("num_warps", 4),
                                     num_stages=plan.get("num_stages", 3), **tile)
    else:
        grid = lambda meta: (triton.cdiv(n_windows, meta["BLOCK_WIN"]), triton.cdiv(C_out, meta["BLOCK_CO"]))  # noqa: E731
        conv_pool_igemm_tuned[grid](*args, K=K, PRECISION="tf32")
    return out


def _cudnn(x, weight, bias, subtract, P):
    y = F.conv2d(x, weight, bias)  # cuDNN on a GPU (channels-last in, channels-last out when x is): disclosed
    N, C, OH, OW = y.shape
    PH, PW = OH // P, OW // P
    out = torch.empty((N, C, PH, PW), dtype=x.dtype, device=x.device)
    if out.numel():
        grid = lambda meta: (N * PH, triton.cdiv(C, meta["BLOCK_C"]), triton.cdiv(PW, meta["BLOCK_PW"]))  # noqa: E731
        pool_epilogue_kernel[grid](y, out, N * PH, PH, PW, C, *y.stride(), float(subtract), P=P)
    return out


def conv_epilogue_pool(x, weight, bias, subtract, P, plan=None):
    """mish(max_pool(hardswish(conv2d(x, weight, bias) - subtract), P)) by the shape's plan (PLANS)."""
    plan = plan or plan_for(x.shape[1], weight.shape[0], weight.shape[2], P)
    if plan.get("channels_last") and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)  # NHWC: K-contiguous pixel tiles (one copy of x)
        weight = weight.contiguous(memory_format=torch.channels_last) if plan["path"] == "cudnn" else weight
    if plan["path"] == "igemm":
        return _igemm(x, weight, bias, subtract, plan)
    return _cudnn(x, weight, bias, subtract, P)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size):
        # Model's constructor: the same parameter names let the validator load its weights.
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        P = self.pool.kernel_size if isinstance(self.pool.kernel_size, int) else self.pool.kernel_size[0]
        return conv_epilogue_pool(x, self.conv.weight, self.conv.bias, self.subtract_value, P)
