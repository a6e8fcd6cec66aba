"""Stage 2: the convolution in the library (cuDNN on a GPU), everything after it in ONE Triton kernel.

This is the shape torch.compile gives the problem (run_benchmark explain=true shows it): a library convolution, then a
fused epilogue. The epilogue kernel reads each conv output element once and writes only the pooled result: bias is
already in the conv; x - subtract, hardswish, the P x P max (NaN-propagating, as max_pool2d) and mish happen in
registers. Each program owns BLOCK pooled outputs of one (n, c) plane row-major, so its P x P loads walk the conv
output rows in order; BLOCK and num_warps are autotuned on the plane size (one config under the interpreter).
What it cannot avoid: the conv output (C_out x OH x OW per image, 1.04 GB at the KernelBench size) goes to memory and
comes back once.
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((256, 4), (512, 4), (1024, 8), (2048, 8))]
CONFIGS = [triton.Config({"BLOCK": 4096}, num_warps=4)] if INTERPRET else _CONFIGS  # interpreter: few, big programs


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


@triton.autotune(configs=CONFIGS, key=["PH", "PW"])
@triton.jit
def pool_epilogue_kernel(y_ptr, out_ptr, total, PH, PW, C, stride_yn, stride_yc, stride_yh, stride_yw, sub,
                         P: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pw = offs % PW
    t = offs // PW
    ph = t % PH
    t = t // PH
    c = t % C
    n = t // C
    base = y_ptr + n * stride_yn + c * stride_yc + (ph * P) * stride_yh + (pw * P) * stride_yw
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    for dy in tl.static_range(P):
        for dx in tl.static_range(P):
            v = tl.load(base + dy * stride_yh + dx * stride_yw, mask=mask, other=0.0).to(tl.float32)
            best = tl.maximum(best, _hardswish(v - sub), propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + offs, _mish(best).to(out_ptr.dtype.element_ty), mask=mask)


def conv_epilogue_pool(x, weight, bias, subtract, P):
    """mish(max_pool(hardswish(conv2d(x, weight, bias) - subtract), P)): cuDNN conv + one Triton kernel."""
    y = F.conv2d(x, weight, bias)  # the library convolution (cuDNN on a GPU): disclosed in the report's composition
    N, C, OH, OW = y.shape
    PH, PW = OH // P, OW // P
    out = torch.empty((N, C, PH, PW), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        grid = lambda meta: (triton.cdiv(total, meta["BLOCK"]),)  # noqa: E731
        pool_epilogue_kernel[grid](y, out, total, PH, PW, C, *y.stride(), float(subtract), P=P)
    return out


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
