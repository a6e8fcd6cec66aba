"""Stage 3: chunked fused linear + cross-entropy; grads of x and weight in the same pass, no host sync.

For each chunk of C rows (C * V <= 2**28 logits: 2048 rows at V = 128256, so the chunk buffer is 512 MiB in bf16
instead of 2 GiB for all 8192 rows):
  1. logits_c = x_c @ W^T                     Triton matmul (fp32 accumulate) into one reused (C, V) buffer
  2. per row: online logsumexp, loss, and     one CE kernel, in place on the buffer:
     g = (softmax - onehot(target)) / n_valid   n_valid is read from device memory (no .item(), no sync)
  3. dx_c = g @ W                             Triton matmul
  4. dW (+)= g^T @ x_c                        Triton matmul whose epilogue adds the fp32 running sum and, on the
                                              last chunk, writes W's dtype: one rounding instead of one per chunk
Backward multiplies the saved dx, dW by grad_output (a device scalar: no sync). Matmul tiles are fixed per dtype
(128 x 256 x 64, 8 warps, 3 stages for 16-bit: the first config of Triton's matmul tutorial), so no autotuner runs per
call; fp32 inputs use IEEE fp32 dots (tf32 would miss fp32 tolerances). Without gradients only steps 1 and 2 run.
"""

import os

import torch
import triton
import triton.language as tl

IGNORE_INDEX = -100
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
MAX_CHUNK_LOGITS = 2**28
# Under the interpreter: small chunks and tiles, so the chunk loop and the matmul's K loop really loop.
CHUNK_ROWS_INTERPRET = 16


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, acc_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, ACCUMULATE: tl.constexpr, PRECISION: tl.constexpr):
    # c = a @ b (+ acc, an fp32 buffer with c's strides). Grouped tile order: GROUP_M row tiles share each column
    # tile of b while it is in L2.
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_n)
    first_m = group * GROUP_M
    group_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * num_n)) % group_m
    pid_n = (pid % (GROUP_M * num_n)) // group_m
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(k0 + rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * stride_cm + rn[None, :] * stride_cn
    if ACCUMULATE:
        acc += tl.load(acc_ptr + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def count_valid_kernel(target_ptr, count_ptr, N, ignore_index, BLOCK_N: tl.constexpr):
    # The mean's gradient divides by the number of counted rows: needed before any chunk writes its gradient.
    offs = tl.arange(0, BLOCK_N)
    count = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for n0 in range(0, N, BLOCK_N):
        t = tl.load(target_ptr + n0 + offs, mask=n0 + offs < N, other=ignore_index)
        count += (t != ignore_index).to(tl.int32)
    tl.store(count_ptr, tl.sum(count, axis=0).to(tl.float32))


@triton.jit
def ce_chunk_kernel(logits_ptr, target_ptr, loss_ptr, count_ptr, row0, stride_row, V, ignore_index,
                    BLOCK_V: tl.constexpr, COMPUTE_GRAD: tl.constexpr):
    # One program per row of the chunk. Pass 1: online logsumexp (exp2) over V. Pass 2 (with gradients):
    # (softmax - onehot) / n_valid written over the logits, while the row (250 KiB in bf16) is still in L2.
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK_V)
    m = float("-inf")
    d = 0.0
    for v0 in range(0, V, BLOCK_V):
        x = tl.load(row_ptr + v0 + cols, mask=v0 + cols < V, other=float("-inf")).to(tl.float32) * LOG2E
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
        m = m_new
    lse2 = m + tl.log2(d)
    target = tl.load(target_ptr + row0 + row)
    valid = target != ignore_index
    x_t = tl.load(row_ptr + tl.where(valid, target, 0)).to(tl.float32)
    tl.store(loss_ptr + row0 + row, tl.where(valid, lse2 * LN2 - x_t, 0.0))
    if COMPUTE_GRAD:
        scale = tl.where(valid, 1.0 / tl.load(count_ptr), 0.0)
        for v0 in range(0, V, BLOCK_V):
            mask = v0 + cols < V
            x = tl.load(row_ptr + v0 + cols, mask=mask, other=0.0).to(tl.float32)
            p = tl.exp2(x * LOG2E - lse2)
            g = tl.where(v0 + cols == target, p - 1.0, p) * scale
            tl.store(row_ptr + v0 + cols, g.to(logits_ptr.dtype.element_ty), mask=mask)


@triton.jit
def mean_loss_kernel(loss_ptr, target_ptr, out_ptr, N, ignore_index, BLOCK_N: tl.constexpr):
    # One deterministic program (N is thousands of tokens) rather than an atomic_add of per-row losses.
    offs = tl.arange(0, BLOCK_N)
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    count = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for n0 in range(0, N, BLOCK_N):
        mask = n0 + offs < N
        total += tl.load(loss_ptr + n0 + offs, mask=mask, other=0.0)
        t = tl.load(target_ptr + n0 + offs, mask=mask, other=ignore_index)
        count += (t != ignore_index).to(tl.int32)
    mean = tl.sum(total, axis=0) / tl.sum(count, axis=0).to(tl.float32)  # 0/0 = NaN, as in F.cross_entropy
    tl.store(out_ptr, mean.to(out_ptr.dtype.element_ty))


@triton.jit
def scale_kernel(x_ptr, scale_ptr, numel, BLOCK: tl.constexpr):
    # Chain rule for the incoming gradient, in place. The scale stays on the device (no .item() sync) and a unit
    # scale (a plain loss.backward()) is skipped here, on the device: no read or write of the gradient at all.
    s = tl.load(scale_ptr).to(tl.float32)
    if s != 1.0:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < numel
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(x_ptr + offs, (x * s).to(x_ptr.dtype.element_ty), mask=mask)


def _mm_config(dtype: torch.dtype) -> dict:
    if INTERPRET:
        return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=2, num_warps=4, PRECISION="ieee")
    if dtype == torch.float32:
        return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3, PRECISION="ieee")
    return dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, PRECISION="tf32")


def _mm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, acc: torch.Tensor | None = None) -> None:
    """out = a @ b (+ acc); a, b, out may be any strided 2-D views (transposes cost nothing)."""
    M, K = a.shape
    N = b.shape[1]
    cfg = _mm_config(a.dtype)
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    matmul_kernel[grid](a, b, out, acc if acc is not None else out, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), out.stride(0), out.stride(1), ACCUMULATE=acc is not None, **cfg)


def _chunk_rows(BT: int, V: int) -> int:
    if INTERPRET:
        return CHUNK_ROWS_INTERPRET
    rows = MAX_CHUNK_LOGITS // max(V, 1)
    rows = rows // 256 * 256 or rows  # whole 128- and 256-row matmul tiles: 2093 rows at V = 128256 become 2048
    return max(1, min(BT, rows))


def _forward(x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, grad_x: bool, grad_w: bool):
    BT, H = x.shape
    V = weight.shape[0]
    dev = x.device
    loss_rows = torch.empty((BT,), device=dev, dtype=torch.float32)
    loss = torch.empty((), device=dev, dtype=x.dtype)
    dx = torch.empty((BT, H), device=dev, dtype=x.dtype) if grad_x else None
    dw = torch.empty((V, H), device=dev, dtype=weight.dtype) if grad_w else None
    count = torch.empty((1,), device=dev, dtype=torch.float32)
    compute_grad = grad_x or grad_w
    if BT:
        if compute_grad:
            count_valid_kernel[(1,)](target, count, BT, IGNORE_INDEX, BLOCK_N=1024)
        C = _chunk_rows(BT, V)
        n_chunks = triton.cdiv(BT, C)
        logits = torch.empty((min(C, BT), V), device=dev, dtype=x.dtype)
        # fp32 running sum of dW across chunks (none needed when one chunk writes dW directly).
        dw_acc = torch.empty((V, H), device=dev, dtype=torch.float32) if grad_w and n_chunks > 1 else None
        BLOCK_V = min(triton.next_power_of_2(V), 256 if INTERPRET else 8192)
        ce_warps = 16 if BLOCK_V >= 8192 else 8 if BLOCK_V >= 2048 else 4
        for i in range(n_chunks):
            r0 = i * C
            r1 = min(BT, r0 + C)
            xc, lc = x[r0:r1], logits[: r1 - r0]
            _mm(xc, weight.t(), lc)
            ce_chunk_kernel[(r1 - r0,)](lc, target, loss_rows, count, r0, lc.stride(0), V, IGNORE_INDEX,
                                        BLOCK_V=BLOCK_V, COMPUTE_GRAD=compute_grad, num_warps=ce_warps)
            if grad_x:
                _mm(lc, weight, dx[r0:r1])
            if grad_w:
                last = i == n_chunks - 1
                _mm(lc.t(), xc, dw if last else dw_acc, acc=dw_acc if i > 0 else None)
    elif grad_w:
        dw.zero_()  # no rows: the weight gets no gradient contribution
    mean_loss_kernel[(1,)](loss_rows, target, loss, BT, IGNORE_INDEX, BLOCK_N=1024)
    return loss, dx, dw


def _scale_(t: torch.Tensor, s: torch.Tensor) -> None:
    if t.numel():
        scale_kernel[(triton.cdiv(t.numel(), 4096),)](t, s, t.numel(), BLOCK=4096)


class FusedLinearCrossEntropyFunction(torch.autograd.Function):
    """Mean CE of x @ W^T whose gradients are computed in the forward pass, chunk by chunk."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss, dx, dw = _forward(x, weight, target, ctx.needs_input_grad[0], ctx.needs_input_grad[1])
        ctx.save_for_backward(dx, dw)
        ctx.used = False
        return loss

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        if ctx.used:
            raise RuntimeError("fused_linear_cross_entropy scales its saved gradients in place and runs backward "
                               "once; retain_graph with a second backward is not supported")
        ctx.used = True
        dx, dw = ctx.saved_tensors
        go = grad_output.reshape(1)
        for t in (dx, dw):
            if t is not None:
                _scale_(t, go)
        return dx, dw, None


def _check(x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> None:
    if x.dim() != 2 or weight.dim() != 2 or target.dim() != 1 or x.shape[1] != weight.shape[1] or \
            target.shape[0] != x.shape[0]:
        raise ValueError(f"expected x (BT, H), weight (V, H), target (BT,); got {tuple(x.shape)}, "
                         f"{tuple(weight.shape)}, {tuple(target.shape)}")
    if x.dtype != weight.dtype:
        raise ValueError(f"x and weight must share a dtype (the matmul takes one), got {x.dtype} and {weight.dtype}")
    if target.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"target must hold integer class indices, got {target.dtype}")


def fused_linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean CE of x @ weight^T with ignore_index=-100, differentiable in x and weight; logits never whole."""
    _check(x, weight, target)
    target = target.contiguous()  # the kernels index target[row] without a stride
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad):
        return FusedLinearCrossEntropyFunction.apply(x, weight, target)
    return _forward(x, weight, target, False, False)[0]  # inference: no autograd node, no gradient work
