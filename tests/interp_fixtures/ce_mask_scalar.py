"""CORRECT, and once refused by the interpreter: the load mask `(cols < V) & valid` combines a block with a scalar
comparison of an int64 target. Its type is int1 (the GPU compiles it as a boolean mask); Triton <= 3.9's
interpreter built the splat of `valid` as int64 ("mask has unsupported dtype"), and the old hint called the mask
"not boolean". worker/device/interp_compat.install_bool_splat makes the interpreter agree with the GPU."""

import torch
import triton
import triton.language as tl


@triton.jit
def ce_rows_kernel(x_ptr, t_ptr, loss_ptr, V, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    t = tl.load(t_ptr + row)
    valid = t != -100
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=(cols < V) & valid, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    xt = tl.sum(tl.where(cols == t, x, 0.0), axis=0)
    tl.store(loss_ptr + row, tl.where(valid, lse - xt, 0.0))


def reference(logits, targets):
    logits = logits.contiguous()
    n, v = logits.shape
    loss = torch.empty(n, device=logits.device, dtype=logits.dtype)
    if n:
        ce_rows_kernel[(n,)](logits, targets, loss, v, logits.stride(0), BLOCK=triton.next_power_of_2(v))  # LAUNCH
    return loss
