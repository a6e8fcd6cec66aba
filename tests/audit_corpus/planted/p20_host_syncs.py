"""A wrapper that reads the maximum back to the host to pick a scale, and synchronizes to be safe."""

import torch
import triton
import triton.language as tl


@triton.jit
def quantize_kernel(out_ptr, x_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = tl.extra.cuda.libdevice.rint(x / scale)
    tl.store(out_ptr + offs, q.to(tl.int8), mask=mask)


def quantize(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    scale = x.abs().max().item() / 127.0  # planted: host_sync, pytorch_compute
    out = torch.empty(x.shape, device=x.device, dtype=torch.int8)
    quantize_kernel[(triton.cdiv(x.numel(), 1024),)](out, x, x.numel(), scale, BLOCK=1024)
    torch.cuda.synchronize()  # planted: host_sync
    if out.cpu().numel() == 0:  # planted: host_sync
        return out
    return out
