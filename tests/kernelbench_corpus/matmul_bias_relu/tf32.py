"""PLANTED BUG (precision): tl.dot in tf32 (Triton's fp32 default on a GPU): inputs rounded to a 10-bit mantissa,
~5e-4 relative error per product, ~0.05 absolute at K = 8192, far past the fp32 tolerance. The CPU interpreter
multiplies in full fp32, so it shows only on a GPU."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_bias, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None].to(tl.int64) * stride_am + k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)
    c = acc + bias[None, :]
    c = tl.where(c < 0.0, 0.0, c)  # relu that keeps NaN, as torch.relu does (tl.maximum may drop it)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn, c, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        if C.numel():
            grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
            matmul_bias_relu_kernel[grid](A, B, bias, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                          bias.stride(0), C.stride(0), C.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                          num_warps=4)
        return C
