# Audit harness for tests/audit_public_corpus/gptqmodel/paroquant_sym_ste.py: the fused symmetric quantize-dequantize
# forward, out = clamp(round(w / s), qmin, qmax) * s per group of group_size consecutive elements of weight (row-major),
# s = scale[group] clamped to [1e-5, 1e5], round half to even, out shaped as weight. Called as
# quantization/paroquant/optimization.py's _sym_quant_dequant_ste_fused calls it under torch.no_grad() (every
# calibration step): float32 weight [out, in] with numel % group_size == 0, a contiguous float32 scale [groups, 1],
# qmin = -2**(bits-1), qmax = 2**(bits-1) - 1 (bits 4 here), group size 32 here. The public
# sym_quant_dequant_ste_forward(weight, scale, *, qmin, qmax, group_size) takes those three keyword-only and passes
# them unchanged to the module-level _triton_sym_qdq_forward_only, the entry here (the probes pass arguments
# positionally). The file imports gptqmodel.utils.env.env_flag, not installed here: a stand-in (the package's own
# definition).
import os
import sys
import types

import torch


def env_flag(name, default="0"):  # gptqmodel/utils/env.py
    value = os.getenv(name)
    if value is None:
        if default is None:
            return False
        if isinstance(default, bool):
            return default
        value = default
    return str(value).strip().lower() in {"1", "true", "yes", "on", "y"}


for _name in ("gptqmodel", "gptqmodel.utils", "gptqmodel.utils.env"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["gptqmodel.utils.env"].env_flag = env_flag

ENTRY = "_triton_sym_qdq_forward_only"
AUDIT_SHAPE = (8, 96)  # weight [out features, in features]


def make_inputs(case):
    m, n = case.shape
    g = 32 if n % 32 == 0 else n
    w = case.randn(m, n) * 0.05
    scale = w.reshape(-1, g).abs().amax(dim=1, keepdim=True) / 7 if w.numel() else w.new_ones(0, 1)
    return (w, scale.contiguous(), -8, 7, g)


def reference(weight, scale, qmin, qmax, group_size):
    if weight.numel() % group_size or scale.numel() != weight.numel() // group_size:
        raise ValueError("numel must be a multiple of group_size, with one scale per group")
    view = weight.reshape(-1, group_size)
    s = scale.reshape(-1, 1).clamp(min=1e-5, max=1e5)
    return (torch.round(view / s).clamp(qmin, qmax) * s).reshape_as(weight)
