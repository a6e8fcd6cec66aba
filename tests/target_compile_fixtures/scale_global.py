# label: bad -- no_sm90_global: runs under the interpreter, refused by the GPU compiler (a float global, line 14)
import torch
import triton
import triton.language as tl

SCALE = 0.5


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * SCALE, mask=mask)


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    return out
