# Audit harness for tests/audit_public_corpus/aqlm/triton_kernel.py: triton_matmul(input, codes, codebooks, scales,
# bias, compute_in_fp32=True) -> input @ W.T + bias, W [out_features, in_features] the AQLM weight:
# W[o * og + a, g * ig + b] = scales[o] * sum_c codebooks[c, codes[o, g, c] mod codebook_size, a, b], codes
# [num_out_groups, num_in_groups, num_codebooks] (signed ints holding unsigned codes), codebooks [num_codebooks,
# codebook_size, og, ig], scales [num_out_groups, 1, 1, 1]; the output has codebooks' dtype. Called as aqlm's
# QuantizedLinear calls it (the gemv op, get_forward_pass_kernel on CUDA for out_group_size 1 outside the CUDA
# kernels' configs, at most 6 tokens): input [batch, tokens, in_features], its nn.Parameters, bias as its default
# bias=True; 2 codebooks of 256 (int8 codes) over input groups of 4. The file imports only torch and triton: no
# stand-in.
import torch

ENTRY = "triton_matmul"
AUDIT_SHAPE = (3, 64, 32)  # tokens, in_features, out_features
CODEBOOKS, CODEBOOK_SIZE = 2, 256


def make_inputs(case):
    m, k, n = case.shape
    ig = 4 if k % 4 == 0 else 1
    codes = case.randint(-128, 128, (n, k // ig, CODEBOOKS), dtype=torch.int8)
    codebooks = case.randn(CODEBOOKS, CODEBOOK_SIZE, 1, ig)
    scales = case.rand(n, 1, 1, 1, low=0.5, high=1.5)
    return (case.randn(1, m, k), codes, codebooks, scales, case.randn(n))


def reference(input, codes, codebooks, scales, bias, compute_in_fp32=True):
    n_cb, size, og, ig = codebooks.shape
    n_out, n_in, _ = codes.shape
    if input.shape[-1] != n_in * ig or codes.shape[2] != n_cb:
        raise ValueError("shapes do not match the AQLM layout")
    idx = codes.long() % size  # [n_out, n_in, n_cb]
    parts = codebooks.double()[torch.arange(n_cb, device=codes.device), idx]  # [n_out, n_in, n_cb, og, ig]
    w = (parts.sum(2) * scales.double()).permute(0, 2, 1, 3).reshape(n_out * og, n_in * ig)
    out = input.reshape(-1, n_in * ig).double() @ w.T
    if bias is not None:
        out = out + bias.double()
    return out.to(codebooks.dtype).reshape(*input.shape[:-1], n_out * og)
