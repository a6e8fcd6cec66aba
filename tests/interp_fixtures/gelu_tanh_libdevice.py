"""CORRECT on a GPU: GELU-tanh through libdevice.tanh (generic and CUDA modules) launched with a list grid; under
the interpreter libdevice returned None and a list grid failed to concatenate with (1,) until interp_libdevice.py
and interp_compat.install_list_grid."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = libdevice.tanh(inner)
    t = 0.5 * (t + cuda_libdevice.tanh(inner))  # the same value through the CUDA module
    tl.store(out_ptr + offs, (0.5 * x * (1.0 + t)).to(out_ptr.dtype.element_ty), mask=mask)


def gelu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    gelu_tanh_kernel[[triton.cdiv(n, 256)]](x, out, n, BLOCK=256)
    return out
