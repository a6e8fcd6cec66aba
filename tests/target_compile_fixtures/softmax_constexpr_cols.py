# label: good -- N_COLS is a per-call constexpr, but it follows the width, which the callers keep: changing the
# batch keeps Triton's specialisation key (no recompile): the compile-count probe makes the static P1 a P2
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, N_COLS: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N_COLS
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * N_COLS + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(m,)](out, x, x.stride(0), N_COLS=n, BLOCK_N=triton.next_power_of_2(n))
    return out
