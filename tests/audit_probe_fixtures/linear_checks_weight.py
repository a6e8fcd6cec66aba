# label: robust layout
# The same product with the check on the wrong tensor: the weight must be contiguous (asserted), while x is read as
# dense. Every layout variant that changes the weight is refused, so only x alone non-contiguous shows the bug.
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
    assert w.is_contiguous(), "the weight must be contiguous"
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty(m, n, device=x.device, dtype=x.dtype)
    linear_rows[(m,)](x, w, y, n, k, BN=16, BK=triton.next_power_of_2(k))
    return y
