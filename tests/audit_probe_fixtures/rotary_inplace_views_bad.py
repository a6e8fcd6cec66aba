# label: bad reference
"""The same in-place rotary on column views of a packed qkv buffer, with the second half's sign wrong: a real bug
that must stay a P0 once every call gets fresh copies."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rotate(base, c, s, HALF: tl.constexpr):
    offs = tl.arange(0, HALF)
    x1 = tl.load(base + offs)
    x2 = tl.load(base + HALF + offs)
    tl.store(base + offs, x1 * c - x2 * s)
    tl.store(base + HALF + offs, x2 * c - x1 * s)  # wrong sign: a real bug


@triton.jit
def rotary_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, stride_q, stride_k, stride_c, HEADS: tl.constexpr,
                  HALF: tl.constexpr):
    row = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, HALF)
    c = tl.load(cos_ptr + row * stride_c + offs)
    s = tl.load(sin_ptr + row * stride_c + offs)
    _rotate(q_ptr + row * stride_q + h * 2 * HALF, c, s, HALF)
    _rotate(k_ptr + row * stride_k + h * 2 * HALF, c, s, HALF)


def rotary_(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, heads: int) -> None:
    """Rotate q and k (tokens, heads * head_dim) in place; cos and sin are (tokens, head_dim // 2)."""
    assert q.stride(-1) == 1 and k.stride(-1) == 1 and cos.stride(-1) == 1 and sin.stride() == cos.stride()
    half = cos.shape[-1]
    rotary_kernel[(q.shape[0], heads)](q, k, cos, sin, q.stride(0), k.stride(0), cos.stride(0), HEADS=heads,
                                       HALF=half)
