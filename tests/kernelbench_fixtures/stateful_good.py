"""The stateful reference's step in one Triton kernel: h = tanh(x + h); out = 2 h."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

batch_size = 8


@triton.jit
def step_kernel(x_ptr, h_ptr, h_out_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    z = tl.load(x_ptr + offs, mask=m) + tl.load(h_ptr + offs, mask=m)
    e = tl.exp(-2.0 * tl.abs(z))
    t = (1.0 - e) / (1.0 + e)
    h = tl.where(z < 0, -t, t)
    tl.store(h_out_ptr + offs, h, mask=m)
    tl.store(out_ptr + offs, 2.0 * h, mask=m)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.hidden = torch.randn(batch_size, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        h = self.hidden.to(x.device).contiguous()
        h_new, out = torch.empty_like(x), torch.empty_like(x)
        n = x.numel()
        step_kernel[(triton.cdiv(n, 256),)](x, h, h_new, out, n, BLOCK=256)
        self.hidden = h_new
        return out
