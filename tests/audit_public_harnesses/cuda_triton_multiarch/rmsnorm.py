# Audit harness for tests/audit_public_corpus/cuda_triton_multiarch/rmsnorm.py: rmsnorm_triton(x, weight, eps) ->
# x / sqrt(mean(x^2 over the row) + eps) * weight, one program per row of a 2-D x [tokens, hidden] (the file's own
# rmsnorm_pytorch reduces dim=1; its rmsnorm_native is torch's rms_norm over the last dim). Called as an LLM block
# calls its RMSNorm (the package's README lists RMSNorm among its transformer kernels; its benchmark compares it
# with torch's rms_norm): hidden states [tokens, 4096] (Llama-7B's hidden size) fp16, the norm's weight [4096] fp16
# (a Parameter, contiguous), eps 1e-6 (Llama's rms_norm_eps). The example's hidden states have unit scale; the
# reference is torch's rms_norm math in float64 (torch upcasts fp16 internally). The file imports only torch and
# triton: no stand-in.
import torch

ENTRY = "rmsnorm_triton"
AUDIT_SHAPE = (8, 4096)  # tokens, hidden
TOLERANCES = {"float16": (1e-2, 1e-2)}  # fp16 output (x's dtype)


def make_inputs(case):
    rows, n = case.shape
    x = case.randn(rows, n, dtype=torch.float16)
    weight = (1.0 + 0.1 * case.randn(n, dtype=torch.float32)).to(torch.float16)
    return (x, weight, 1e-6)


def reference(x, weight, eps=1e-6):
    if x.dim() != 2 or weight.shape != (x.shape[-1],):
        raise ValueError("x [rows, N] and weight [N]")
    xd = x.double()
    return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * weight.double()).to(x.dtype)
