"""data_ptr() used for an alignment test and a cache keyed on the device index: neither caches outputs."""

import torch
import triton
import triton.language as tl

_SM_COUNT: dict[int, int] = {}


@triton.jit
def copy_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    nprog = tl.num_programs(0).to(tl.int64)
    for start in range(pid * BLOCK, n, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


def _sm_count(device: torch.device) -> int:
    idx = device.index or 0
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def copy(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    if x.data_ptr() % 16 != 0:
        raise ValueError("expects a 16-byte aligned tensor")
    out = torch.empty_like(x)
    n = x.numel()
    grid = (min(triton.cdiv(n, 4096), 4 * _sm_count(x.device)),)
    copy_kernel[grid](out, x, n, BLOCK=4096, num_warps=8)
    return out
