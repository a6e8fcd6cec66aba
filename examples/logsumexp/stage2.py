"""Stage 2: chunked two-pass logsumexp with an autotuned chunk width and num_warps.

Stage 1 pads a whole row into registers: a 100 000-wide row needs a 131 072-element block and spills. Here
pass 1 takes the maximum over BLOCK_N-wide chunks and pass 2 sums exp(x - max) over the same chunks, so the
register footprint is fixed whatever N is. The cost: the row is read twice (from L2 for rows that fit).
"""

import os

import torch
import triton
import triton.language as tl

_CONFIGS = [triton.Config({"BLOCK_N": b}, num_warps=w) for b, w in ((1024, 4), (2048, 4), (2048, 8), (4096, 8),
                                                                    (8192, 8), (8192, 16))]
CONFIGS = _CONFIGS[:1] if os.environ.get("TRITON_INTERPRET") == "1" else _CONFIGS


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def logsumexp_two_pass_kernel(x_ptr, out_ptr, stride_row, stride_col, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    cols = tl.arange(0, BLOCK_N)
    m_vec = tl.full((BLOCK_N,), -float("inf"), dtype=tl.float32)
    for c0 in range(0, N, BLOCK_N):
        x = tl.load(x_row + (c0 + cols) * stride_col, mask=c0 + cols < N, other=-float("inf")).to(tl.float32)
        m_vec = tl.maximum(m_vec, x)
    m = tl.max(m_vec, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # N = 0: the sum below is 0 and the result -inf, no NaN
    s_vec = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(0, N, BLOCK_N):
        x = tl.load(x_row + (c0 + cols) * stride_col, mask=c0 + cols < N, other=-float("inf")).to(tl.float32)
        s_vec += tl.exp(x - m)
    tl.store(out_ptr + row, (m + tl.log(tl.sum(s_vec, axis=0))).to(out_ptr.dtype.element_ty))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """logsumexp over the last dim of a 2-D tensor of any strides."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    out = torch.empty((M,), dtype=x.dtype, device=x.device)
    if M:
        logsumexp_two_pass_kernel[(M,)](x, out, x.stride(0), x.stride(1), N)
    return out
