"""stage1.py of 33_VanillaRNN: Stage 1: a direct, correct translation (masks on every load/store, triton.cdiv grids, power-of-2 blocks, fp32 accumulation, int64 offsets).

The reference's op sequence, one Triton kernel per op:
  combined = cat(x, hidden)            -> cat_kernel
  pre      = combined @ W_i2h^T + b    -> linear_kernel
  hidden   = tanh(pre)                 -> tanh_kernel
  out      = hidden @ W_h2o^T + b      -> linear_kernel
fp32 tl.dot with input_precision="ieee": PyTorch runs this fp32 matmul without TF32 (its default), so fp32
accuracy is required.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# The problem's module-level size read by Model.__init__ (the hidden state's initial value).
batch_size = 256


@triton.jit
def cat_kernel(out_ptr, a_ptr, b_ptr, M, KA, KB,
               stride_am, stride_ak, stride_bm, stride_bk, stride_om, stride_ok,
               BLOCK: tl.constexpr):
    # out[m, :KA] = a[m, :], out[m, KA:KA+KB] = b[m, :]
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    in_a = cols < KA
    in_b = (cols >= KA) & (cols < KA + KB)
    va = tl.load(a_ptr + row * stride_am + cols * stride_ak, mask=in_a, other=0.0)
    vb = tl.load(b_ptr + row * stride_bm + (cols - KA) * stride_bk, mask=in_b, other=0.0)
    v = tl.where(in_a, va, vb)
    tl.store(out_ptr + row * stride_om + cols * stride_ok, v, mask=cols < KA + KB)


@triton.jit
def linear_kernel(out_ptr, a_ptr, w_ptr, bias_ptr, M, N, K,
                  stride_am, stride_ak, stride_wn, stride_wk, stride_om, stride_on,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[m, n] = sum_k a[m, k] * w[n, k] + bias[n]
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0).to(tl.float32)
        # w^T tile: [BLOCK_K, BLOCK_N]
        w = tl.load(w_ptr + ks[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0).to(tl.float32)
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def tanh_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # tanh(x) = sign(x) * (1 - e) / (1 + e), e = exp(-2|x|) in (0, 1]: no overflow; NaN propagates
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    y = tl.where(x < 0, -t, t)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _linear(a, w, b):
    M, K = a.shape
    N = w.shape[0]
    out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return out
    BM, BN, BK = 32, 32, 32
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    linear_kernel[grid](out, a, w, b, M, N, K,
                        a.stride(0), a.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
                        BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
    return out


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.hidden = torch.randn((batch_size, hidden_size))

        # Define the RNN cell components (input to hidden, hidden to hidden, and hidden to output)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)  # Input to hidden
        self.h2o = nn.Linear(hidden_size, output_size)  # Hidden to output
        self.tanh = nn.Tanh()  # Activation function for hidden state

    def forward(self, x: torch.Tensor, initial_hidden=None):
        # The reference copies initial_hidden into its state, then replaces the state by the new hidden:
        # reading initial_hidden directly gives the same result (and works at any batch size).
        h = initial_hidden if initial_hidden is not None else self.hidden
        h = h.to(device=x.device, dtype=x.dtype)
        M, KA = x.shape
        KB = h.shape[1]
        combined = torch.empty((M, KA + KB), dtype=x.dtype, device=x.device)
        if M > 0 and KA + KB > 0:
            BLOCK = 1024
            cat_kernel[(M, triton.cdiv(KA + KB, BLOCK))](
                combined, x, h, M, KA, KB, x.stride(0), x.stride(1), h.stride(0), h.stride(1),
                combined.stride(0), combined.stride(1), BLOCK=BLOCK)
        pre = _linear(combined, self.i2h.weight, self.i2h.bias)
        hidden = torch.empty_like(pre)
        n = pre.numel()
        if n > 0:
            BLOCK = 1024
            tanh_kernel[(triton.cdiv(n, BLOCK),)](hidden, pre.contiguous(), n, BLOCK=BLOCK)
        self.hidden = hidden
        return _linear(hidden, self.h2o.weight, self.h2o.bias)
