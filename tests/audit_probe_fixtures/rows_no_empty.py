# label: good
# Row sums, right for every batch its callers give; an empty batch (0 rows) crashes the wrapper's final reshape
# (`view(m, -1)` of 0 elements), as aqlm's matmul did (held_out_9). The batch at 0 is an input outside the default
# contract ("batch >= 1"): a robustness finding reported apart, not a P0 -- unless the sidecar's `[audit] require =
# ["empty"]` says the callers give empty batches (then it is a P0).
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, y_ptr, sxm, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sxm + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def rowsum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    x = x if x.stride(-1) == 1 else x.contiguous()
    y = torch.empty(m, device=x.device, dtype=x.dtype)
    rowsum_kernel[(m,)](x, y, x.stride(0), n, BLOCK=triton.next_power_of_2(n))
    return y.view(m, -1)[:, 0]
