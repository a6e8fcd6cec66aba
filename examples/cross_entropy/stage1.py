"""Stage 1: one program per row, two passes over V (max, then sum of exponentials), then a mean kernel."""

import torch
import triton
import triton.language as tl

SUPPORTS_BACKWARD = False  # forward only: stage 3 adds the fused backward

IGNORE_INDEX = -100


@triton.jit
def cross_entropy_fwd_kernel(
    logits_ptr,
    target_ptr,
    loss_ptr,
    stride_row,
    stride_col,
    V,
    ignore_index,
    BLOCK_V: tl.constexpr,
):
    # int64 row offset: N * V passes 2**31 elements at LLM sizes (8192 x 128256 is already 1.05e9).
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK_V)
    # Pass 1: the row maximum, so that exp() below never overflows.
    m = tl.full((BLOCK_V,), float("-inf"), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        x = tl.load(row_ptr + (v0 + cols) * stride_col, mask=v0 + cols < V, other=float("-inf")).to(
            tl.float32
        )
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    # Pass 2: sum of exp(x - max); masked lanes load -inf and contribute exp(-inf) = 0.
    s = tl.zeros((BLOCK_V,), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        x = tl.load(row_ptr + (v0 + cols) * stride_col, mask=v0 + cols < V, other=float("-inf")).to(
            tl.float32
        )
        s += tl.exp(x - row_max)
    lse = row_max + tl.log(tl.sum(s, axis=0))
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    # An ignored row must not read logits[row, -100]: point it at column 0 and discard the value.
    x_t = tl.load(row_ptr + tl.where(valid, target, 0) * stride_col).to(tl.float32)
    tl.store(loss_ptr + row, tl.where(valid, lse - x_t, 0.0))


@triton.jit
def mean_loss_kernel(loss_ptr, target_ptr, out_ptr, N, ignore_index, BLOCK_N: tl.constexpr):
    # One program: N is the number of tokens (thousands), a single pass is a few microseconds and
    # deterministic,
    # unlike an atomic_add of per-row losses.
    offs = tl.arange(0, BLOCK_N)
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    count = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for n0 in range(0, N, BLOCK_N):
        mask = n0 + offs < N
        total += tl.load(loss_ptr + n0 + offs, mask=mask, other=0.0)
        t = tl.load(target_ptr + n0 + offs, mask=mask, other=ignore_index)
        count += (t != ignore_index).to(tl.int32)
    # 0 / 0 = NaN when every row is ignored, as in F.cross_entropy.
    mean = tl.sum(total, axis=0) / tl.sum(count, axis=0).to(tl.float32)
    tl.store(out_ptr, mean.to(out_ptr.dtype.element_ty))


def _check(logits: torch.Tensor, target: torch.Tensor) -> None:
    if logits.dim() != 2 or target.dim() != 1 or target.shape[0] != logits.shape[0]:
        raise ValueError(
            f"expected logits (N, V) and target (N,), got {tuple(logits.shape)} and {tuple(target.shape)}"
        )
    if target.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"target must hold integer class indices, got {target.dtype}")


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy with ignore_index=-100, in the dtype of the logits."""
    _check(logits, target)
    target = target.contiguous()  # the kernels index target[row] without a stride
    N, V = logits.shape
    loss = torch.empty((N,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    if N > 0:
        BLOCK_V = min(triton.next_power_of_2(V), 4096)
        cross_entropy_fwd_kernel[(N,)](
            logits,
            target,
            loss,
            logits.stride(0),
            logits.stride(1),
            V,
            IGNORE_INDEX,
            BLOCK_V=BLOCK_V,
            num_warps=8,
        )
    mean_loss_kernel[(1,)](loss, target, out, N, IGNORE_INDEX, BLOCK_N=1024)
    return out
