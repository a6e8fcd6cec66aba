# Audit harness for tests/audit_public_corpus/fp_quant/mxfp4.py: mxfp4_forward_kernel_wrapper(x, hadamard_matrix,
# return_clip_mask=False, gaussian_scale=3/4, quest=True) -> (x_dq, clip_mask or None), FP-Quant's MXFP4 pseudo-
# quantizer: x (flattened) is cut into rows of g = hadamard_matrix.shape[-1] values and rotated (row @ H), each group of
# 32 rotated values gets a power-of-2 scale (QuEST: 2**floor(log2(gaussian_scale * std + 1e-8)), std the group's
# population standard deviation; abs_max: 2**(floor(log2(max |v|)) - 2) / 0.75), is rounded to the FP4 (E2M1) grid
# {0, 0.5, 1, 1.5, 2, 3, 4, 6} (ties go down: strict > thresholds; 0 takes the sign -1) and multiplied back; the clip
# mask is |v / scale| < 6. Called as pseudoquant_linear_fns.forward_pseudoquantize calls it on FPQuantLinear's
# pseudo-quantized path (FPQuantConfig(pseudoquantization=True), the path for GPUs without QuTLASS, e.g. H100), with
# the config's defaults (MXFP4, forward_method "quest", hadamard_group_size 32): x the activations
# `x.contiguous().flatten(end_dim=-2)` [tokens, in_features] (and the weight [out, in] the same way), the module's
# forward_hadamard_matrix (scipy's Sylvester Hadamard(32) / sqrt(32), in the module's dtype), return_clip_mask=True,
# quest=True, gaussian_scale=2.92247856 / 6. The models are bf16; the harness runs fp16 (as unsloth-zoo's): bfloat16
# tl.dot is not exact under Triton 3.9's CPU interpreter. The file imports only torch and triton.
import torch

ENTRY = "mxfp4_forward_kernel_wrapper"
AUDIT_SHAPE = (48, 256)  # tokens, in_features (a multiple of the group size 32, as FPQuantLinear asserts)
GAUSSIAN_SCALE = 2.92247856 / 6.0  # forward_method "quest"


def _hadamard(n, dtype, device):
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return (h * n ** -0.5).to(dtype=dtype, device=device)


def make_inputs(case):
    tokens, features = case.shape
    x = case.randn(tokens, features).to(torch.float16)
    return (x, _hadamard(32, torch.float16, x.device), True, GAUSSIAN_SCALE, True)


def _fp4(a):  # |v| on the E2M1 grid, strict > thresholds as the kernel's
    out = torch.zeros_like(a)
    for t, v in ((0.25, 0.5), (0.75, 1.0), (1.25, 1.5), (1.75, 2.0), (2.5, 3.0), (3.5, 4.0), (5.0, 6.0)):
        out = torch.where(a > t, torch.full_like(a, v), out)
    return out


def reference(x, hadamard_matrix, return_clip_mask=False, gaussian_scale=3 / 4, quest=True):
    g = hadamard_matrix.shape[-1]
    if x.numel() % g or g % 32:
        raise ValueError("x.numel() must be a multiple of the Hadamard size, itself a multiple of 32")
    v = (x.reshape(-1, g).float() @ hadamard_matrix.float()).reshape(-1, 32)
    if quest:
        mean = v.sum(-1, keepdim=True) / 32
        std = torch.sqrt(((v * v).sum(-1, keepdim=True) / 32 - mean * mean).clamp_min(0))
        exps = torch.exp2(torch.floor(torch.log2(gaussian_scale * std + 1e-8)))
    else:
        exps = torch.exp2(torch.floor(torch.log2(v.abs().amax(-1, keepdim=True))) - 2) / 0.75
    s = v / exps
    q = _fp4(s.abs()) * torch.where(s > 0, 1.0, -1.0)
    out = (q * exps).reshape(x.shape).to(x.dtype)
    return out, ((s.abs() < 6).reshape(x.shape) if return_clip_mask else None)
