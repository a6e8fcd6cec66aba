# label: robust sizes
# Scales each head of a (tokens, heads, head_dim) tensor with tl.arange(0, HEAD_DIM) on the unpadded head dim: it
# compiles only for powers of 2. Under the interpreter Triton raises a ValueError while it builds the kernel, which is
# the kernel failing to compile (a CompilationError on a GPU), not the entry refusing the input.
import torch
import triton
import triton.language as tl


@triton.jit
def head_scale_kernel(x_ptr, y_ptr, HEAD_DIM: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * HEAD_DIM + tl.arange(0, HEAD_DIM)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 0.5)


def head_scale(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel():
        head_scale_kernel[(x.shape[0] * x.shape[1],)](x, y, HEAD_DIM=x.shape[2])
    return y
