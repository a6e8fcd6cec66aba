# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def ce_kernel(loss_ptr, x_ptr, t_ptr, stride_x, n_cols, ignore_index, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    t = tl.load(t_ptr + row)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    xt = tl.load(x_ptr + row * stride_x + t, mask=t != ignore_index, other=0.0)
    loss = tl.where(t == ignore_index, 0.0, lse - xt)
    tl.store(loss_ptr + row, loss)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    logits = logits.contiguous()
    m, n = logits.shape
    loss = torch.empty(m, device=logits.device, dtype=torch.float32)
    if m:
        ce_kernel[(m,)](loss, logits, target, logits.stride(0), n, ignore_index, BLOCK_N=triton.next_power_of_2(n))
    return loss
