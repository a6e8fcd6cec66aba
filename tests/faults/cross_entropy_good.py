"""CORRECT cross-entropy (mean over rows): one program per row computes logsumexp - logit[target]; the mean is a
library sum (a design choice, disclosed in the composition)."""

import torch
import triton
import triton.language as tl


@triton.jit
def ce_row_kernel(x_ptr, t_ptr, loss_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    t = tl.load(t_ptr + row)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    xt = tl.load(x_ptr + row * stride_x + t)
    tl.store(loss_ptr + row, lse - xt)


def reference(logits, targets):
    logits = logits.contiguous()
    n, c = logits.shape
    loss = torch.empty(n, device=logits.device, dtype=torch.float32)
    ce_row_kernel[(n,)](logits, targets, loss, c, logits.stride(0), BLOCK=triton.next_power_of_2(c))
    return loss.mean()
