"""Bug (expert id): the expert id is loaded and multiplied by 0, so every token uses expert 0's weights. Hidden
when the shrink halves the experts with d_model down to one."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def expert_matvec_kernel(x_ptr, idx_ptr, w_ptr, y_ptr, D, F, stride_we, stride_wd,
                         BLOCK_D: tl.constexpr, BLOCK_F: tl.constexpr):
    pid_f = tl.program_id(0)
    t = tl.program_id(1).to(tl.int64)
    e = tl.load(idx_ptr + t).to(tl.int64) * 0
    offs_f = pid_f * BLOCK_F + tl.arange(0, BLOCK_F)
    acc = tl.zeros((BLOCK_F,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        offs_d = d0 + tl.arange(0, BLOCK_D)
        x = tl.load(x_ptr + t * D + offs_d, mask=offs_d < D, other=0.0)
        w = tl.load(w_ptr + e * stride_we + offs_d[:, None] * stride_wd + offs_f[None, :],
                    mask=(offs_d[:, None] < D) & (offs_f[None, :] < F), other=0.0)
        acc += tl.sum(x[:, None] * w, axis=0)
    tl.store(y_ptr + t * F + offs_f, acc, mask=offs_f < F)


class ModelNew(nn.Module):
    def __init__(self, num_experts: int, d_model: int, d_ff: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_experts, d_model, d_ff) / d_model ** 0.5)

    def forward(self, x: torch.Tensor, expert_idx: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.w.contiguous()
        T, D = x.shape
        F = w.shape[2]
        y = torch.empty((T, F), dtype=x.dtype, device=x.device)
        if y.numel():
            expert_matvec_kernel[(triton.cdiv(F, 64), T)](x, expert_idx, w, y, D, F, w.stride(0), w.stride(1),
                                                          BLOCK_D=64, BLOCK_F=64)
        return y
