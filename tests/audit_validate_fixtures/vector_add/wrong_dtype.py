"""BAD: the right values in the wrong dtype: the output is allocated float16 for float32 inputs. run_validation fails
it (dtype_mismatch); audit_kernel must give the same P0 in the same words (issue 45: the audit missed a wrong output
dtype)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, s.to(out_ptr.dtype.element_ty), mask=mask)


def reference(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty(x.shape, dtype=torch.float16, device=x.device)  # BUG: the inputs' dtype is float32
    n = x.numel()
    if n:
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
