"""Stage 3: fused linear + cross-entropy on one persistent (TMA on Hopper) matmul kernel with a CE epilogue.

One matmul kernel serves all three products (examples/matmul/stage3.py's design: one program per SM looping over
128 x 256 tiles in grouped order, operands through host-side TMA descriptors when the layout allows). Its optional
epilogue reduces each logits tile, still in registers, to per-row partials: max and sum of exp2 over the tile's
columns (log2 domain) and the target's logit when the target falls in the tile.
  - Without gradients: logits = x @ W^T with the CE epilogue and no store: the logits never reach memory; a
    per-row kernel combines the (BT, cdiv(V, BLOCK_N)) partials into the loss. Time ~ one matmul.
  - With gradients, per chunk of C rows: logits_c = x_c @ W^T stored once (bf16) with the same epilogue; one pass
    per row combines the partials into the logsumexp and writes g = (softmax - onehot) / n_valid over the logits
    (one read, one write: the logsumexp is already known); dx_c = g @ W; dW (+)= g^T @ x_c. Transposed operands
    are strides (pointer path) or transposed descriptor tiles (TMA path), never copies.
Chunk size: one chunk whenever its logits take no more memory than the fp32 dW running sum that several chunks
would need (C * V * elt <= 4 * V * H, i.e. C <= 2H rows in bf16): at the bench shape (8192 x 4096 x 128256) one
chunk of 2 GiB, no fp32 accumulator (2 GiB) and no dW read-modify-write per chunk. Above that, chunks of that size
and an fp32 running sum in the dW matmul's epilogue (one rounding to W's dtype, on the last chunk).
n_valid and grad_output stay on the device (no .item(), no sync). fp32 inputs take the pointer path with IEEE fp32
dots (tf32 would miss fp32 tolerances); the pointer path also serves the interpreter, pre-Hopper GPUs and layouts
TMA cannot describe.
"""

import os

import torch
import triton
import triton.language as tl

try:  # Triton >= 3.3 on CUDA; absent elsewhere
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - depends on the Triton build
    TensorDescriptor = None

IGNORE_INDEX = -100
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
# Under the interpreter: small chunks and tiles, so the chunk loop, the K loop and the persistent loop really loop.
CHUNK_ROWS_INTERPRET = 16
# Matmul tiles per role for 16-bit inputs (the explore script overrides these): 128 x 256 x 64, 8 warps (two
# warpgroups, a 64 KiB fp32 accumulator), 3 stages: 144 KiB of operand buffers + 64 KiB of store staging.
CONFIGS = {
    role: dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, FLATTEN=True)
    for role in ("logits", "dx", "dw")
}
# None: the memory rule above; an int caps the chunk's logits (elements) instead.
MAX_CHUNK_LOGITS = None


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Grouped ordering: GROUP_M row tiles share each column panel of B while it is in L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def linear_kernel(a_src, b_src, c_src, acc_ptr, pmax_ptr, psum_ptr, target_ptr, tlogit_ptr, M, N, K, stride_am,
                  stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, row0, NT,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  NUM_SMS: tl.constexpr, USE_TMA: tl.constexpr, TMA_STORE: tl.constexpr, A_T: tl.constexpr,
                  B_T: tl.constexpr,
                  CE: tl.constexpr, STORE_C: tl.constexpr, ACCUMULATE: tl.constexpr, PRECISION: tl.constexpr,
                  UPCAST_DOT: tl.constexpr, FLATTEN: tl.constexpr):
    # c = a @ b (+ acc, an fp32 buffer with c's strides), a (M, K), b (K, N). With USE_TMA, a_src/b_src/c_src are
    # descriptors of the operands' row-major storage (A_T: a is stored (K, M); B_T: b is stored (N, K)); otherwise
    # they are pointers and the strides say everything. c_src is a descriptor only with TMA_STORE. CE: per-row
    # partials of the tile (see the docstring).
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            if USE_TMA:  # zero-filled past the edges: no masks
                if A_T:
                    a = a_src.load([ki * BLOCK_K, pid_m * BLOCK_M]).T
                else:
                    a = a_src.load([pid_m * BLOCK_M, ki * BLOCK_K])
                if B_T:
                    b = b_src.load([pid_n * BLOCK_N, ki * BLOCK_K]).T
                else:
                    b = b_src.load([ki * BLOCK_K, pid_n * BLOCK_N])
            else:
                rk = ki * BLOCK_K + tl.arange(0, BLOCK_K)
                a = tl.load(a_src + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                            mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
                b = tl.load(b_src + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                            mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
                if UPCAST_DOT:  # interpreter only: its tl.dot cannot multiply raw bf16 bit patterns
                    a = a.to(tl.float32)
                    b = b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        rmask = rm < M
        if CE:
            vals = acc
            if STORE_C:  # reduce exactly what is stored, so the softmax of the gradient pass sums to one
                if TMA_STORE:
                    vals = acc.to(c_src.dtype).to(tl.float32)
                else:
                    vals = acc.to(c_src.dtype.element_ty).to(tl.float32)
            z = tl.where(rn[None, :] < N, vals * LOG2E, float("-inf"))
            mx = tl.max(z, axis=1)
            s = tl.sum(tl.exp2(z - mx[:, None]), axis=1)
            part = rm * NT + pid_n
            tl.store(pmax_ptr + part, mx, mask=rmask)
            tl.store(psum_ptr + part, s, mask=rmask)
            t = tl.load(target_ptr + row0 + rm, mask=rmask, other=-1)
            hit = rmask & (t >= pid_n * BLOCK_N) & (t < pid_n * BLOCK_N + BLOCK_N)
            xt = tl.sum(tl.where(rn[None, :] == t[:, None], vals, 0.0), axis=1)
            tl.store(tlogit_ptr + row0 + rm, xt, mask=hit)
        if STORE_C:
            offs = rm[:, None] * stride_cm + rn[None, :] * stride_cn
            mask = rmask[:, None] & (rn[None, :] < N)
            if ACCUMULATE:
                acc += tl.load(acc_ptr + offs, mask=mask, other=0.0)
            if TMA_STORE:
                c_src.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_src.dtype))
            else:
                tl.store(c_src + offs, acc.to(c_src.dtype.element_ty), mask=mask)


@triton.jit
def ce_row_kernel(logits_ptr, pmax_ptr, psum_ptr, tlogit_ptr, target_ptr, loss_ptr, count_ptr, row0, stride_row, V,
                  NT, ignore_index, BLOCK_T: tl.constexpr, BLOCK_V: tl.constexpr, COMPUTE_GRAD: tl.constexpr):
    # One program per row of the chunk: the tile partials give the logsumexp (no pass over V for it); with
    # gradients, one pass writes (softmax - onehot) / n_valid over the stored logits.
    row = tl.program_id(0).to(tl.int64)
    offs_t = tl.arange(0, BLOCK_T)
    m = float("-inf")
    d = 0.0
    for t0 in range(0, NT, BLOCK_T):
        tm = t0 + offs_t < NT
        pm = tl.load(pmax_ptr + row * NT + t0 + offs_t, mask=tm, other=float("-inf"))
        ps = tl.load(psum_ptr + row * NT + t0 + offs_t, mask=tm, other=0.0)
        m_new = tl.maximum(m, tl.max(pm, axis=0))
        d = d * tl.exp2(m - m_new) + tl.sum(ps * tl.exp2(pm - m_new), axis=0)
        m = m_new
    lse2 = m + tl.log2(d)
    target = tl.load(target_ptr + row0 + row)
    valid = target != ignore_index
    x_t = tl.load(tlogit_ptr + row0 + row)
    tl.store(loss_ptr + row0 + row, tl.where(valid, lse2 * LN2 - x_t, 0.0))
    if COMPUTE_GRAD:
        scale = tl.where(valid, 1.0 / tl.load(count_ptr), 0.0)
        row_ptr = logits_ptr + row * stride_row
        cols = tl.arange(0, BLOCK_V)
        for v0 in range(0, V, BLOCK_V):
            mask = v0 + cols < V
            x = tl.load(row_ptr + v0 + cols, mask=mask, other=0.0).to(tl.float32)
            p = tl.exp2(x * LOG2E - lse2)
            g = tl.where(v0 + cols == target, p - 1.0, p) * scale
            tl.store(row_ptr + v0 + cols, g.to(logits_ptr.dtype.element_ty), mask=mask)


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


_SMS: dict[int, int] = {}


def _num_sms(device: torch.device) -> int:
    if device.type != "cuda":
        return 3  # the interpreter: a few programs, so each one loops over several tiles as it would on a GPU
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SMS:
        _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SMS[idx]


def _mm_config(dtype: torch.dtype, role: str) -> dict:
    if INTERPRET:
        return dict(BLOCK_M=32, BLOCK_N=64, BLOCK_K=32, GROUP_M=2, FLATTEN=False)
    if dtype == torch.float32:
        return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3, FLATTEN=False)
    return CONFIGS[role]


def _tma_capable(t: torch.Tensor) -> bool:
    if INTERPRET or TensorDescriptor is None or not t.is_cuda or t.dtype not in (torch.float16, torch.bfloat16):
        return False
    return torch.cuda.get_device_capability(t.device)[0] >= 9


def _row_major(t: torch.Tensor) -> bool:
    # TMA: last stride 1, the other stride and the base address multiples of 16 bytes.
    return (t.stride(1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0
            and t.stride(0) >= t.shape[1])


def _tma_operand(t: torch.Tensor, rows: int, cols: int):
    """(descriptor, transposed) for the logical (rows-block x cols-block) tile of t, or None if TMA cannot read t."""
    if _row_major(t):
        return TensorDescriptor.from_tensor(t, [rows, cols]), False
    if _row_major(t.t()):
        return TensorDescriptor.from_tensor(t.t(), [cols, rows]), True
    return None


def _linear(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor | None, role: str, acc: torch.Tensor | None = None,
            ce: tuple | None = None) -> None:
    """c = a @ b (+ acc) for strided 2-D views; with ce = (pmax, psum, target, tlogit, row0, NT), also the CE
    partials of every row (c None: the product is reduced and never stored)."""
    M, K = a.shape
    N = b.shape[1]
    if M == 0 or N == 0:
        return
    cfg = dict(_mm_config(a.dtype, role))
    BM, BN, BK = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    num_sms = _num_sms(a.device)
    grid = (min(num_sms, triton.cdiv(M, BM) * triton.cdiv(N, BN)),)
    store = c is not None
    pmax, psum, target, tlogit, row0, nt = ce if ce is not None else (a, a, a, a, 0, 1)
    upcast = INTERPRET and a.dtype == torch.bfloat16
    # IEEE for fp32 (and the interpreter's upcast bf16, exact either way); 16-bit dots ignore the setting.
    precision = "ieee" if a.dtype == torch.float32 or upcast else "tf32"
    cs = c if store else a
    srcs = (a, b, cs, False, False, False, False)
    if K > 0 and _tma_capable(a):
        da, db = _tma_operand(a, BM, BK), _tma_operand(b, BK, BN)
        if da and db:
            # A 16-bit C tile is stored through TMA (64 KiB of staging next to 144 KiB of operand stages); the
            # fp32 running sum of dW (128 KiB per tile) would not fit beside them and is stored with pointers.
            tma_c = store and c.element_size() == 2 and _row_major(c)
            dc = TensorDescriptor.from_tensor(c, [BM, BN]) if tma_c else cs
            srcs = (da[0], db[0], dc, True, tma_c, da[1], db[1])
    linear_kernel[grid](srcs[0], srcs[1], srcs[2], acc if acc is not None else cs, pmax, psum, target, tlogit,
                        M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), cs.stride(0), cs.stride(1),
                        row0, nt, NUM_SMS=num_sms, USE_TMA=srcs[3], TMA_STORE=srcs[4], A_T=srcs[5], B_T=srcs[6],
                        CE=ce is not None,
                        STORE_C=store, ACCUMULATE=acc is not None, PRECISION=precision,
                        UPCAST_DOT=upcast, **cfg)


def _chunk_rows(BT: int, H: int, V: int, elt: int) -> int:
    if INTERPRET:
        return CHUNK_ROWS_INTERPRET
    if MAX_CHUNK_LOGITS is not None:
        rows = MAX_CHUNK_LOGITS // max(V, 1)
    else:
        rows = 4 * H // elt  # the chunk's logits no larger than an fp32 (V, H) running sum
    rows = rows // 256 * 256 or rows  # whole 128- and 256-row matmul tiles
    return max(1, min(BT, rows))


def _forward(x: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, grad_x: bool, grad_w: bool):
    BT, H = x.shape
    V = weight.shape[0]
    dev = x.device
    loss_rows = torch.empty((BT,), device=dev, dtype=torch.float32)
    loss = torch.empty((), device=dev, dtype=x.dtype)
    dx = torch.empty((BT, H), device=dev, dtype=x.dtype) if grad_x else None
    dw = torch.empty((V, H), device=dev, dtype=weight.dtype) if grad_w else None
    compute_grad = grad_x or grad_w
    if BT:
        BN = _mm_config(x.dtype, "logits")["BLOCK_N"]
        NT = triton.cdiv(V, BN)
        tlogit = torch.empty((BT,), device=dev, dtype=torch.float32)
        count = torch.empty((1,), device=dev, dtype=torch.float32)
        BLOCK_T = min(triton.next_power_of_2(NT), 1024)
        BLOCK_V = min(triton.next_power_of_2(V), 256 if INTERPRET else 8192)
        ce_warps = 16 if BLOCK_V >= 8192 else 8 if BLOCK_V >= 2048 else 4
        if not compute_grad:
            # The logits are reduced in the matmul's epilogue and never stored.
            pmax = torch.empty((BT, NT), device=dev, dtype=torch.float32)
            psum = torch.empty_like(pmax)
            _linear(x, weight.t(), None, "logits", ce=(pmax, psum, target, tlogit, 0, NT))
            ce_row_kernel[(BT,)](pmax, pmax, psum, tlogit, target, loss_rows, count, 0, 0, V, NT, IGNORE_INDEX,
                                 BLOCK_T=BLOCK_T, BLOCK_V=BLOCK_V, COMPUTE_GRAD=False, num_warps=4)
        else:
            count_valid_kernel[(1,)](target, count, BT, IGNORE_INDEX, BLOCK_N=1024)
            C = _chunk_rows(BT, H, V, x.element_size())
            n_chunks = triton.cdiv(BT, C)
            logits = torch.empty((min(C, BT), V), device=dev, dtype=x.dtype)
            pmax = torch.empty((min(C, BT), NT), device=dev, dtype=torch.float32)
            psum = torch.empty_like(pmax)
            # fp32 running sum of dW across chunks (none needed when one chunk writes dW directly).
            dw_acc = torch.empty((V, H), device=dev, dtype=torch.float32) if grad_w and n_chunks > 1 else None
            for i in range(n_chunks):
                r0 = i * C
                r1 = min(BT, r0 + C)
                xc, lc = x[r0:r1], logits[: r1 - r0]
                _linear(xc, weight.t(), lc, "logits", ce=(pmax, psum, target, tlogit, r0, NT))
                ce_row_kernel[(r1 - r0,)](lc, pmax, psum, tlogit, target, loss_rows, count, r0, lc.stride(0), V,
                                          NT, IGNORE_INDEX, BLOCK_T=BLOCK_T, BLOCK_V=BLOCK_V, COMPUTE_GRAD=True,
                                          num_warps=ce_warps)
                if grad_x:
                    _linear(lc, weight, dx[r0:r1], "dx")
                if grad_w:
                    last = i == n_chunks - 1
                    _linear(lc.t(), xc, dw if last else dw_acc, "dw", acc=dw_acc if i > 0 else None)
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
