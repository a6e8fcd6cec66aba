# Audit harness for tests/audit_public_corpus/xtuner/rms_norm.py: rms_norm(x, weight, eps) = RMSNorm.apply -> y, y = x /
# sqrt(mean(x**2, -1) + eps) * weight over the last dim, in x's dtype; its autograd backward gives dx and dweight.
# Called as xtuner's rms_norm_forward (dispatched onto the RMSNorm modules of InternLM2, Llama, Mistral, Qwen2, ...
# when USE_TRITON_KERNEL is on) calls it: hidden_states [batch, seq, hidden] and the module's weight [hidden], in
# training. The file imports xtuner.utils.device.get_device_name (for the rstd buffer's device), not installed here:
# a stand-in with xtuner's own body ("cuda" when CUDA is available, else "cpu"; NPUs left out).
import sys
import types

import torch


def get_device_name() -> str:  # xtuner/utils/device.py
    return "cuda" if torch.cuda.is_available() else "cpu"


for _name in ("xtuner", "xtuner.utils", "xtuner.utils.device"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["xtuner.utils.device"].get_device_name = get_device_name

ENTRY = "rms_norm"
AUDIT_SHAPE = (2, 5, 96)  # batch, sequence, hidden size


def make_inputs(case):
    b, s, n = case.shape
    return (case.randn(b, s, n), case.randn(n), 1e-6)


def reference(x, weight, eps):
    xf = x.double()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.double()
    return y.to(x.dtype)
