"""Stage 3: a persistent matmul for Hopper: one program per SM looping over C tiles, fed by TMA when it can be.

Two kernels, one algorithm. `matmul_kernel_tma` reads A and B through host-side TMA descriptors (the copy engine
moves whole tiles into shared memory, zero-filling past the edges, so the kernel needs no masks) and stores C
through one. `matmul_kernel_persistent` does the same with pointer loads; it serves the CPU interpreter,
Triton
builds without `triton.tools.tensor_descriptor`, GPUs before sm_90, fp32, and layouts TMA cannot describe (last
stride not 1, or a row not a multiple of 16 bytes).
"""

import os

import torch
import triton
import triton.language as tl

try:  # Triton >= 3.3 on CUDA; absent elsewhere
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - depends on the Triton build
    TensorDescriptor = None

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Grouped ordering (see stage 2): consecutive tiles share a B panel in L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def _tma_pre_hook(nargs: dict) -> None:
    # The descriptors are built once per call; each config gives them its own tile shapes before launch.
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bk, bn]
    nargs["c_desc"].block_shape = [bm, bn // 2 if nargs["EPILOGUE_SUBTILE"] else bn]


def _tma_configs() -> list[triton.Config]:
    # 128x256x64 with 8 warps is the Hopper sweet spot (two warpgroups, 64 KiB accumulator); 48 KiB of smem
    # per
    # stage, so 3-4 stages fit in 228 KiB only when the epilogue is split in two halves (EPILOGUE_SUBTILE).
    out = []
    for bm, bn, bk, stages, sub in [
        (128, 256, 64, 3, True),
        (128, 256, 64, 4, True),
        (128, 256, 64, 3, False),
        (128, 128, 64, 4, False),
        (128, 128, 128, 3, True),
        (256, 128, 64, 3, True),
    ]:
        out.append(
            triton.Config(
                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "EPILOGUE_SUBTILE": sub},
                num_stages=stages,
                num_warps=8,
                pre_hook=_tma_pre_hook,
            )
        )
    return out


@triton.autotune(configs=_tma_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel_tma(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr,
    NUM_SMS: tl.constexpr,
):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    # flatten=True lets the software pipeliner prefetch the next tile's first K steps during this epilogue.
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M
        offs_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_m, offs_k])
            b = b_desc.load([offs_k, offs_n])
            acc = tl.dot(a, b, acc)
        if EPILOGUE_SUBTILE:
            # Two (BLOCK_M, BLOCK_N/2) stores halve the epilogue's shared-memory staging buffer.
            acc = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c_desc.store([offs_m, offs_n], acc0.to(c_desc.dtype))
            c_desc.store([offs_m, offs_n + BLOCK_N // 2], acc1.to(c_desc.dtype))
        else:
            c_desc.store([offs_m, offs_n], acc.to(c_desc.dtype))


def _ptr_configs() -> list[triton.Config]:
    if _INTERPRET:
        return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4})]
    return [
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    ]


@triton.autotune(configs=_ptr_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel_persistent(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    NUM_SMS: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # Masks rather than clamped indices keep the loads vectorized (see stage 2).
        mask_m = offs_m[:, None] < M
        mask_n = offs_n[None, :] < N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            ks = ki * BLOCK_K + offs_k
            a = tl.load(
                a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                mask=mask_m & (ks[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                mask=(ks[:, None] < K) & mask_n,
                other=0.0,
            )
            if UPCAST_DOT:  # interpreter only: its tl.dot cannot multiply raw bf16 bit patterns
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc)
        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c, mask=mask_m & mask_n)


def _num_sms(device: torch.device) -> int:
    if device.type != "cuda":
        return 3  # the interpreter: a few programs, so each one loops over several tiles as it would on a GPU
    return torch.cuda.get_device_properties(device).multi_processor_count


def _tma_ok(t: torch.Tensor) -> bool:
    # TMA: last stride 1, other strides and the base address multiples of 16 bytes.
    return (
        t.stride(1) == 1
        and (t.stride(0) * t.element_size()) % 16 == 0
        and t.data_ptr() % 16 == 0
        and t.stride(0) >= t.shape[1]
    )


def _use_tma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> bool:
    if (
        _INTERPRET
        or TensorDescriptor is None
        or not a.is_cuda
        or a.dtype not in (torch.float16, torch.bfloat16)
    ):
        return False
    if torch.cuda.get_device_capability(a.device)[0] < 9:
        return False
    return _tma_ok(a) and _tma_ok(b) and _tma_ok(c)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B with a persistent kernel: TMA descriptors on Hopper, pointer loads elsewhere."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul needs (M, K) @ (K, N), got {tuple(a.shape)} @ {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ValueError(f"dtypes differ: {a.dtype} vs {b.dtype}")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if M == 0 or N == 0:
        return c
    num_sms = _num_sms(a.device)

    def grid(meta: dict) -> tuple[int]:
        return (min(num_sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)

    if K > 0 and _use_tma(a, b, c):
        # Placeholder block shapes: _tma_pre_hook sets each config's own before every launch.
        a_desc = TensorDescriptor.from_tensor(a, [128, 64])
        b_desc = TensorDescriptor.from_tensor(b, [64, 128])
        c_desc = TensorDescriptor.from_tensor(c, [128, 128])
        matmul_kernel_tma[grid](a_desc, b_desc, c_desc, M, N, K, NUM_SMS=num_sms)
        return c
    matmul_kernel_persistent[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        NUM_SMS=num_sms,
        UPCAST_DOT=_INTERPRET and a.dtype == torch.bfloat16,
    )
    return c
