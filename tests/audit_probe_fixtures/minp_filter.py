# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def min_p_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride, min_p, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=1.0)  # a dense parameter in every caller: no stride taken
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")) * w
    p = tl.exp(x - tl.max(x, axis=0))
    keep = p >= min_p  # the top logit always has p = 1
    tl.store(out_ptr + row * n_cols + cols, tl.where(keep, x, -float("inf")), mask=mask)


def apply_min_p(logits: torch.Tensor, weight: torch.Tensor, min_p: float = 0.1) -> torch.Tensor:
    """Scaled logits, -inf where softmax < min_p * its max (the filter's meaning, not an overflow). `weight` is a
    per-vocabulary scale, an nn.Parameter in every caller."""
    logits = logits.contiguous()
    m, n = logits.shape
    out = torch.empty_like(logits)
    min_p_kernel[(m,)](logits, weight, out, n, logits.stride(0), min_p, BLOCK=triton.next_power_of_2(n))
    return out
