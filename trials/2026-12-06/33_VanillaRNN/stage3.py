"""stage3.py of 33_VanillaRNN: Stage 3: advanced (fusion, on-chip reuse, pipelining, stable reductions, tiling, persistent kernels).

Changes from stage 2:
  - 2D tiling with grouped program ordering (1D grid, GROUP_M tile-rows per group): at full size M = 256 is
    two 128-row tiles, so the two programs that need the same weight panel W[n-tile, :] run back to back and
    the second reads it from L2: the 2 GiB i2h weight comes from HBM about once instead of twice;
  - software-pipelined K loops (tl.range with num_stages from the config) for both K segments;
  - contiguity/divisibility hints on the K offsets so the weight and activation loads vectorize;
  - still fused: cat (two K segments, no combined tensor), bias + tanh epilogue, bias epilogue.
fp32 tl.dot with input_precision="ieee" (fp32 accuracy: PyTorch does not use TF32 for this matmul).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

# The problem's module-level size read by Model.__init__ (the hidden state's initial value).
batch_size = 256

_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "GROUP_M": 8, "NUM_STAGES": 4}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "NUM_STAGES": 4}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "NUM_STAGES": 4}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "NUM_STAGES": 2}, num_warps=8, num_stages=2),
]
# The interpreter cannot time configs: offer one (the first, the main GPU candidate).
CONFIGS = _CONFIGS[:1] if os.environ.get("TRITON_INTERPRET") == "1" else _CONFIGS


@triton.jit
def _grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may be short
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _accumulate(acc, a_ptr, w_ptr, offs_m, offs_n, M, N, K, stride_am, stride_ak, stride_wn, stride_wk,
                BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr):
    # acc += a[offs_m, :K] @ w[offs_n, :K]^T, K loop software-pipelined
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[:, None] < N
    for k0 in tl.range(0, K, BLOCK_K, num_stages=NUM_STAGES):
        ks = tl.max_contiguous(tl.multiple_of(k0 + tl.arange(0, BLOCK_K), BLOCK_K), BLOCK_K)
        k_mask = ks[None, :] < K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=m_mask & k_mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + ks[None, :] * stride_wk,
                    mask=n_mask & k_mask, other=0.0).to(tl.float32)
        acc = tl.dot(a, tl.trans(w), acc, input_precision="ieee")
    return acc


@triton.autotune(configs=CONFIGS, key=["M", "N", "KA", "KB"])
@triton.jit
def rnn_linear_kernel(out_ptr, x_ptr, h_ptr, w_ptr, bias_ptr, M, N, KA, KB,
                      stride_xm, stride_xk, stride_hm, stride_hk, stride_wn, stride_wk, stride_om, stride_on,
                      APPLY_TANH: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_STAGES: tl.constexpr):
    # out = act(cat(x, h) @ w^T + bias), w: [N, KA + KB]; KB = 0 means a plain linear on x.
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc = _accumulate(acc, x_ptr, w_ptr, offs_m, offs_n, M, N, KA,
                      stride_xm, stride_xk, stride_wn, stride_wk, BLOCK_K, NUM_STAGES)
    acc = _accumulate(acc, h_ptr, w_ptr + KA * stride_wk, offs_m, offs_n, M, N, KB,
                      stride_hm, stride_hk, stride_wn, stride_wk, BLOCK_K, NUM_STAGES)
    n_ok = offs_n < N
    bias = tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    if APPLY_TANH:
        # tanh(v) = sign(v) * (1 - e) / (1 + e), e = exp(-2|v|) in (0, 1]: no overflow; NaN propagates
        e = tl.exp(-2.0 * tl.abs(acc))
        t = (1.0 - e) / (1.0 + e)
        acc = tl.where(acc < 0, -t, t)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & n_ok[None, :])


def _rnn_linear(x, h, w, b, apply_tanh):
    M, KA = x.shape
    KB = h.shape[1] if h is not None else 0
    if h is None:
        h = x  # not read: KB = 0
    N = w.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if M == 0 or N == 0:
        return out
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    rnn_linear_kernel[grid](out, x, h, w, b, M, N, KA, KB,
                            x.stride(0), x.stride(1), h.stride(0), h.stride(1), w.stride(0), w.stride(1),
                            out.stride(0), out.stride(1), APPLY_TANH=apply_tanh)
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
        hidden = _rnn_linear(x, h, self.i2h.weight, self.i2h.bias, True)
        self.hidden = hidden
        return _rnn_linear(hidden, None, self.h2o.weight, self.h2o.bias, False)
