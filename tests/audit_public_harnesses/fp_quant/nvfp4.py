# Audit harness for tests/audit_public_corpus/fp_quant/nvfp4.py: nvfp4_forward_kernel_wrapper(x, hadamard_matrix,
# global_scale) -> x_dq, FP-Quant's NVFP4 pseudo-quantizer: x (flattened) is cut into rows of g =
# hadamard_matrix.shape[-1] values and rotated (row @ H); each group of 16 rotated values v gets the scale
# s = fp8_e4m3(global_scale * max|v| / 6) and is rounded to the FP4 (E2M1) grid {0, 0.5, 1, 1.5, 2, 3, 4, 6} as
# v * global_scale / s (strict > thresholds, 0 takes the sign -1), then multiplied back by s / global_scale. Called as
# pseudoquant_linear_fns.forward_pseudoquantize calls it on FPQuantLinear's pseudo-quantized path
# (FPQuantConfig(forward_dtype=NVFP4, forward_method="abs_max", pseudoquantization=True), the path for GPUs without
# QuTLASS), hadamard_group_size 32 (the default): x the activations `x.contiguous().flatten(end_dim=-2)` [tokens,
# in_features] (and the weight the same way), the module's forward_hadamard_matrix (Hadamard(32) / sqrt(32) in the
# module's dtype) and its act_global_scale buffer, a [1] tensor of the module's dtype holding 3.0 (FPQuantLinear's
# abs_max branch comes before its NVFP4 one). The models are bf16; the harness runs fp16 (as unsloth-zoo's): bfloat16
# tl.dot is not exact under Triton 3.9's CPU interpreter. The file imports only torch and triton.
import torch

ENTRY = "nvfp4_forward_kernel_wrapper"
AUDIT_SHAPE = (48, 256)  # tokens, in_features (a multiple of the Hadamard size, as FPQuantLinear asserts)


def _hadamard(n, dtype, device):
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return (h * n ** -0.5).to(dtype=dtype, device=device)


def make_inputs(case):
    tokens, features = case.shape
    x = case.randn(tokens, features).to(torch.float16)
    return (x, _hadamard(32, torch.float16, x.device), torch.tensor([3.0], dtype=torch.float16, device=x.device))


def _fp4(a):  # |v| on the E2M1 grid, strict > thresholds as the kernel's
    out = torch.zeros_like(a)
    for t, v in ((0.25, 0.5), (0.75, 1.0), (1.25, 1.5), (1.75, 2.0), (2.5, 3.0), (3.5, 4.0), (5.0, 6.0)):
        out = torch.where(a > t, torch.full_like(a, v), out)
    return out


def reference(x, hadamard_matrix, global_scale):
    g = hadamard_matrix.shape[-1]
    if x.numel() % g or g % 16:
        raise ValueError("x.numel() must be a multiple of the Hadamard size, itself a multiple of 16")
    gs = global_scale.float().reshape(()) if global_scale is not None else torch.tensor(1.0)
    v = (x.reshape(-1, g).float() @ hadamard_matrix.float()).reshape(-1, 16)
    s = (gs * v.abs().amax(-1, keepdim=True) / 6).to(torch.float8_e4m3fn).float()
    w = v * gs / s
    q = _fp4(w.abs()) * torch.where(w > 0, 1.0, -1.0)
    return (q * s / gs).reshape(x.shape).to(x.dtype)
