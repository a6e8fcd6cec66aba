# label: good
# 3 x of float32 inputs, returned in float16 (as a GEMM that returns its activations' half dtype): the reference
# probe judges the fp16 output at fp16 precision, not at the float32 case's (held_out_18's false P0).
import torch
import triton
import triton.language as tl


@triton.jit
def triple_half_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, (x * 3.0).to(tl.float16), mask=offs < n)


def triple_half(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty(x.shape, device=x.device, dtype=torch.float16)
    if x.numel():
        triple_half_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y
