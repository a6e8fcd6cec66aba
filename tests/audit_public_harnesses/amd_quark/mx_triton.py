# Audit harness for tests/audit_public_corpus/amd_quark/mx_triton.py: qdq_mxfp4_triton(x, scale_calculation_mode="even")
# -> x fake-quantized to OCP MXFP4 along the last dim and read back in x's dtype: per block of 32 values a shared
# power-of-two scale 2 ** (floor(log2(amax rounded to 2 mantissa bits)) - 2) (quark's "even" rounding, even_round in
# quark/torch/quantization/utils.py), each value divided by it, rounded to the nearest FP4 E2M1 value (0, 0.5, 1, 1.5,
# 2, 3, 4, 6; ties away from zero, as both the kernel and the file's own torch path downcast_to_mxfp_torch round:
# "+1 then >> 1"), saturated at 6, times the scale; an all-zero block stays zero. It runs _downcast_to_mxfp then
# _upcast_from_mxfp. Called as quark's MXFP4 fake quantization calls it with QUARK_MXFP4_IMPL=triton
# (quark/torch/kernel/__init__.py MXFP4DynamicFakeQuantizeFunction.forward -> mx.qdq_mxfp4 = qdq_mxfp4_triton, for
# fp16/bf16 tensors only; auto_smooth calls it on weights): the activations of a linear layer [tokens, in_features]
# (in_features a multiple of 32: MX blocks), fp16 here (bf16 runs the same kernels; see the labelling notes). The
# file imports only torch and triton; its `with torch.cuda.device(x.device)` is a no-op under the interpreter.
import torch

ENTRY = "qdq_mxfp4_triton"
AUDIT_SHAPE = (6, 2048)  # tokens, in_features
_E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)


def make_inputs(case):
    t, k = case.shape
    return (case.randn(t, k, dtype=torch.float16), "even")


def reference(x, scale_calculation_mode="even"):
    if scale_calculation_mode != "even":
        raise NotImplementedError("only the 'even' scale mode")
    if x.dtype not in (torch.float16, torch.bfloat16) or x.shape[-1] % 32:
        raise ValueError("fp16/bf16 with a last dim that is a multiple of 32 (MX blocks)")
    xf = x.double().reshape(*x.shape[:-1], -1, 32)
    amax = xf.abs().amax(-1, keepdim=True).float()
    am = ((amax.view(torch.int32) + 0x200000) & 0x7F800000).view(torch.float32).double()  # even_round
    e = torch.where(am == 0, torch.full_like(am, -127.0), torch.floor(torch.log2(am))) - 2
    s = torch.exp2(e.clamp(-127, 127))
    v = xf / s
    a = v.abs().clamp(max=6.0)
    grid = _E2M1.to(x.device)
    i = torch.searchsorted(grid, a).clamp(1, len(grid) - 1)
    lo, hi = grid[i - 1], grid[i]
    q = torch.where(a - lo >= hi - a, hi, lo)  # nearest, ties away from zero
    return (torch.sign(v) * q * s).reshape(x.shape).to(x.dtype)
