"""A token-count tl.constexpr: every new batch or sequence length compiles the kernel again."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(x_ptr, s_ptr, out_ptr, n_tokens: tl.constexpr, hidden: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = (cols < hidden) & (row < n_tokens)
    s = tl.load(s_ptr + row)
    x = tl.load(x_ptr + row * hidden + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * hidden + cols, x * s, mask=mask)


def scale_rows(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    x, s = x.contiguous(), s.contiguous()
    batch, seq_len, hidden = x.shape
    out = torch.empty_like(x)
    n_tokens = batch * seq_len
    scale_rows_kernel[(n_tokens,)](x, s, out, n_tokens,  # planted: constexpr_recompile
                                   hidden, BLOCK=triton.next_power_of_2(hidden))
    return out
