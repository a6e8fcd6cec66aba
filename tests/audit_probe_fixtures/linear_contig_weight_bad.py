# label: robust layout
# The same wrapper (w.contiguous(): the weight is fine), but x is read as dense (row * k): rows of a wider buffer, an
# input its callers give (a slice of a larger activation), come out wrong. A contract bug: P0, with the contract it
# assumed ("w contiguous (linear calls .contiguous())").
import torch
import triton
import triton.language as tl


@triton.jit
def linear_rows(x_ptr, w_ptr, y_ptr, n_out, k_in, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.program_id(0)
    ks = tl.arange(0, BK)
    x = tl.load(x_ptr + m * k_in + ks, mask=ks < k_in, other=0.0)
    for n0 in range(0, n_out, BN):
        ns = n0 + tl.arange(0, BN)
        w = tl.load(w_ptr + ns[:, None] * k_in + ks[None, :], mask=(ns[:, None] < n_out) & (ks[None, :] < k_in),
                    other=0.0)
        tl.store(y_ptr + m * n_out + ns, tl.sum(w * x[None, :], axis=1), mask=ns < n_out)


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    w = w.contiguous()
    n = w.shape[0]
    y = torch.empty(m, n, device=x.device, dtype=x.dtype)
    linear_rows[(m,)](x, w, y, n, k, BN=16, BK=triton.next_power_of_2(k))
    return y
