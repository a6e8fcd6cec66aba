"""A KernelBench-style ModelNew: one Triton ReLU, and the rest of the forward in PyTorch."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


def triton_relu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out)
        self.weight = nn.Parameter(torch.randn(d_out, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)  # planted: pytorch_compute
        h = triton_relu(h)
        h = torch.matmul(h, self.weight)  # planted: pytorch_compute
        h = h @ self.weight.t()  # planted: pytorch_compute
        return F.softmax(h, dim=-1)  # planted: pytorch_compute
