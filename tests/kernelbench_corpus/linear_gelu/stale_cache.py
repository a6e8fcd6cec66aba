"""PLANTED BUG (stale cache): results cached by (data_ptr, shape) of the input: new values written into the same
tensor return the previous output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_gelu_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk,
                       stride_om, stride_on, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + k[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        # W is (N, K): the (k, n) element of W^T sits at n * stride_wn + k * stride_wk
        w = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :].to(tl.int64) * stride_wn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    y = acc + tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    u = 0.7978845608028654 * (y + 0.044715 * y * y * y)
    tanh_u = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh through exp: the same in Triton 3.6, 3.9 and the interpreter
    out = 0.5 * y * (1.0 + tanh_u)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :] * stride_on, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self._cache = {}
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()))
        if key in self._cache:
            return self._cache[key]
        M, K = x.shape
        w, b = self.fc.weight, self.fc.bias.contiguous()
        N = w.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
            linear_gelu_kernel[grid](x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                     out.stride(0), out.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
        self._cache[key] = out
        return out
