# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def embed_kernel(idx_ptr, w_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    row = tl.load(idx_ptr + tok)
    cols = tl.arange(0, BLOCK)
    mask = cols < dim
    tl.store(out_ptr + tok * dim + cols, tl.load(w_ptr + row * dim + cols, mask=mask), mask=mask)


class _Embed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, idx, weight):
        idx, weight = idx.contiguous(), weight.contiguous()
        out = torch.empty(*idx.shape, weight.shape[1], device=weight.device, dtype=weight.dtype)
        embed_kernel[(idx.numel(),)](idx, weight, out, weight.shape[1], BLOCK=triton.next_power_of_2(weight.shape[1]))
        return out


embed_apply = _Embed.apply  # an autograd Function's apply: (*args), no defaults of its own


def embed(idx: torch.Tensor, weight: torch.Tensor, padding_idx: int = -1) -> torch.Tensor:
    """F.embedding's forward: indices in [0, num_embeddings); padding_idx=-1 means none (as in aten, where -1 is
    never a valid index), and a padding row is read like any other in the forward."""
    return embed_apply(idx, weight)
