"""Stage 3: persistent grid-stride kernel with streaming cache hints.

A fixed grid of a few programs per SM walks the tiles (no tail wave of short-lived programs, no per-program
launch cost at 2**28 elements = 65536 tiles of 4096), and the loads/stores are marked streaming
(evict_first / .cs): every byte is touched once, so it should not push other data out of the 60 MiB L2.
Vector add is bandwidth bound: stages 2 and 3 both aim at the HBM roofline; stage 3 shaves the launch tail.
"""

import os

import torch
import triton
import triton.language as tl

# WAVES: programs per SM of the persistent grid; WAVES = 0 is the plain grid of one program per tile, which
# autotuning keeps where the grid-stride loop does not pay.
_CONFIGS = [
    triton.Config({"BLOCK_SIZE": bs, "WAVES": wv}, num_warps=w)
    for bs, w, wv in ((2048, 4, 8), (4096, 4, 4), (4096, 8, 4), (8192, 8, 2), (8192, 16, 2), (16384, 16, 1),
                      (1024, 4, 0), (2048, 4, 0), (4096, 8, 0), (8192, 8, 0))
]
CONFIGS = _CONFIGS[:1] if os.environ.get("TRITON_INTERPRET") == "1" else _CONFIGS
_SM_COUNT: dict[int, int] = {}


@triton.jit
def _add_tile(x_ptr, y_ptr, out_ptr, tile, n_elements, stride_x, stride_y, BLOCK_SIZE: tl.constexpr):
    offs = tile * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs * stride_x, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    y = tl.load(y_ptr + offs * stride_y, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    tl.store(out_ptr + offs, (x + y).to(out_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


@triton.autotune(configs=CONFIGS, key=["n_elements"])
@triton.jit
def add_persistent_kernel(x_ptr, y_ptr, out_ptr, n_elements, stride_x, stride_y, BLOCK_SIZE: tl.constexpr,
                          WAVES: tl.constexpr):
    # int64 tile indices: offsets past 2**31 elements do not wrap.
    pid = tl.program_id(0).to(tl.int64)
    nprog = tl.num_programs(0).to(tl.int64)
    num_tiles = tl.cdiv(n_elements, BLOCK_SIZE)
    if WAVES == 0:  # plain grid: one tile per program
        _add_tile(x_ptr, y_ptr, out_ptr, pid, n_elements, stride_x, stride_y, BLOCK_SIZE)
    else:
        for i in tl.range(0, tl.cdiv(num_tiles - pid, nprog)):  # tiles pid, pid + nprog, pid + 2 * nprog, ...
            _add_tile(x_ptr, y_ptr, out_ptr, pid + i * nprog, n_elements, stride_x, stride_y, BLOCK_SIZE)


def _sm_count(device: torch.device) -> int:
    if device.type != "cuda":
        return 2  # the interpreter: two programs, so the grid-stride loop really loops
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x + y for 1-D tensors of any stride (other ranks are flattened after a contiguous copy)."""
    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError(f"expected same shape and dtype, got {tuple(x.shape)} {x.dtype} and {tuple(y.shape)} {y.dtype}")
    shape = x.shape
    if x.dim() != 1:
        x, y = x.contiguous().view(-1), y.contiguous().view(-1)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    if n:
        sms = _sm_count(x.device)
        tiles = lambda meta: triton.cdiv(n, meta["BLOCK_SIZE"])
        grid = lambda meta: (tiles(meta) if meta["WAVES"] == 0 else min(tiles(meta), sms * meta["WAVES"]),)
        add_persistent_kernel[grid](x, y, out, n, x.stride(0), y.stride(0))
    return out.view(shape)
