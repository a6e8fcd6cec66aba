# Audit harness for tests/audit_public_corpus/conch_triton_kernels/rms_norm.py: fused_add_rms_norm_launcher(x,
# residual, weight, epsilon), in place: residual <- x + residual (rounded to the model dtype, as vLLM's
# fused_add_rms_norm), x <- (r * rsqrt(mean(r^2) + eps)).to(dtype) * weight with r = the new residual in fp32. Called
# as conch's ops.normalization.rms_norm.fused_add_rms_norm (vLLM's RMSNorm.forward with a residual: every decoder
# layer's input and post-attention norm but the first) calls it: hidden states and residual [num_tokens, hidden]
# contiguous in the model dtype (fp16 here), weight [hidden] of the same dtype, eps 1e-6, hidden 4096 (Llama-7B).
# The file imports only torch and triton: no stand-in.
import torch

ENTRY = "fused_add_rms_norm_launcher"
AUDIT_SHAPE = (6, 4096)  # num_tokens, hidden_size


def make_inputs(case):
    t, h = case.shape
    weight = (1.0 + 0.1 * case.randn(h)).to(torch.float16)
    return (case.randn(t, h, dtype=torch.float16), case.randn(t, h, dtype=torch.float16), weight, 1e-6)


def reference(x, residual, weight, epsilon):
    if weight.shape != (x.shape[-1],) or residual.shape != x.shape:
        raise ValueError("x and residual [..., hidden], weight [hidden]")
    s = (x + residual).to(x.dtype)  # the residual add in the model dtype
    r = s.double()
    normed = (r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + epsilon)).to(x.dtype)
    residual.copy_(s)
    x.copy_((normed.double() * weight.double()).to(x.dtype))
