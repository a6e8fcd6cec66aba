# Audit harness for tests/audit_public_corpus/colossalai/rms_layernorm.py: rms_layernorm(x, weight, eps,
# norm_output=None, residual=None) -> (y, x), y = x / sqrt(mean(x**2, -1) + eps) * weight for x [tokens, hidden]
# (colossalai's nopadding_llama/baichuan RMSNorm when the CUDA extension is off; with residual, x += residual first and
# the sum is returned). Called as those models call it without a residual. The file imports only triton (torch via
# the tensors): no stand-in.
import torch

ENTRY = "rms_layernorm"
AUDIT_SHAPE = (6, 100)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n), case.randn(n), 1e-6)


def reference(x, weight, eps, norm_output=None, residual=None):
    if residual is not None:
        x = x + residual
    xf = x.double()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.double()
    return y.to(x.dtype), x
