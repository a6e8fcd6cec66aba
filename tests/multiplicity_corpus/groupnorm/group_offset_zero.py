"""Bug (group offset): the statistics are read from group 0 of the sample (`g * 0`), every group is normalized
with them. Hidden when the shrink leaves one group."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def group_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    cpg = C // G
    count = cpg * HW
    start = n.to(tl.int64) * C * HW + (g * 0) * cpg * HW  # group 0's first element, whatever g is
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, count, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + start + idx, mask=idx < count, other=0.0).to(tl.float32)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / count
    var = tl.sum(acc2, axis=0) / count - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    out_start = n.to(tl.int64) * C * HW + g * cpg * HW
    for off in range(0, count, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        m = idx < count
        x = tl.load(x_ptr + out_start + idx, mask=m, other=0.0).to(tl.float32)
        c = g * cpg + idx // HW
        w = tl.load(w_ptr + c, mask=m, other=1.0)
        b = tl.load(b_ptr + c, mask=m, other=0.0)
        tl.store(y_ptr + out_start + idx, (x - mean) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C = x.shape[:2]
        HW = x[0, 0].numel()
        y = torch.empty_like(x)
        if x.numel():
            G = self.gn.num_groups
            group_norm_kernel[(N * G,)](x, self.gn.weight, self.gn.bias, y, C, HW, G, self.gn.eps, BLOCK=1024)
        return y
