# label: good example (the entry checks its output buffer against the input: a refusal, not a crash)
# held_out_32's siglip sigmoid_bce_forward: the rows probe cut the logits to one row and left the caller's output
# buffer at the full batch; the entry's own assert refused it, and the audit called that a crash (a false P0).
import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m), mask=m)


def double_into(x: torch.Tensor, outs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    out = outs[0]  # the caller's buffers come as a tuple (siglip passes its loss and gradient slices so)
    assert out.shape == x.shape, f"out {tuple(out.shape)} must match x {tuple(x.shape)}"
    x = x.contiguous()
    n = x.numel()
    double_kernel[(triton.cdiv(n, 128),)](out, x, n, BLOCK=128)
    return out
