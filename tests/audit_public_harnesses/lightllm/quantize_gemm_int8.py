# Audit harness for tests/audit_public_corpus/lightllm/quantize_gemm_int8.py: quantize_int8_perrow(fpa) -> (a, a_scale),
# symmetric per-row int8 quantization of fpa [M, K]: a_scale = max|row| / 127, a = fpa / a_scale cast to int8 (the
# kernel's `.to(tl.int8)`, which truncates, as torch's cast does); matmul_int8 then computes (a @ b) * a_scale * b_scale.
# The file imports only time, torch and triton: no stand-in.
import torch

ENTRY = "quantize_int8_perrow"
AUDIT_SHAPE = (6, 100)


def make_inputs(case):
    m, k = case.shape
    return (case.randn(m, k),)


def reference(fpa):
    x = fpa.float()
    scale = x.abs().amax(dim=1) / 127.0
    return (x / scale[:, None]).to(torch.int8), scale.to(fpa.dtype)
