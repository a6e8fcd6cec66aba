# Audit harness for tests/audit_public_corpus/minference/xattention_fa.py: softmax_fuse_block_sum(attn_weights_slice,
# reshaped_block_size, segment_size, chunk_start, chunk_end, real_q_len, scale, is_causal=True) -> [b, h, q_rows / bs,
# k_cols / bs], XAttention's block-importance estimate: each row of the strided (antidiagonal) score slice is
# softmaxed in base 2 (2**(x * scale), i.e. softmax(x * scale * ln 2)), causally for row r at absolute position
# chunk_start + r (keys j <= chunk_start + r), rows at or past real_q_len zeroed, then summed over bs x bs blocks.
# Called as xattention.xattn_estimate calls it with use_triton (the default of xattention_forward on a GPU whose name
# has "100"): the slice is flat_group_gemm_fuse_reshape's output for one 2048-token query chunk at stride 8 ([bsz, heads,
# 2048 / 8, k_len_padded / 8], contiguous, the model's dtype: bf16), reshaped_block_size = 128 / 8 = 16 and
# segment_size = min(4096, 16) = 16, chunk_start = (k_block_num - q_block_num) * 16 + chunk_idx * 256 (0 for the first
# chunk of a prefill), real_q_len = the unpadded key length / 8, scale = log2(e) / sqrt(head_dim) / stride / norm
# (head_dim 128, norm 1), is_causal=True; bsz is asserted 1 by the caller. The file imports only torch and triton.
import math

import torch

ENTRY = "softmax_fuse_block_sum"
AUDIT_SHAPE = (1, 2, 256, 256)  # bsz, heads, rows of one 2048-token chunk at stride 8, key columns (2048 / 8)
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}  # one bf16 rounding of each block sum


def make_inputs(case):
    b, h, rows, cols = case.shape
    scores = (case.randn(b, h, rows, cols) * 8.0).to(torch.bfloat16)  # q.k sums over 8 strided rows of d = 128
    real = cols - 3  # the unpadded key length / 8: the last rows are padding
    return (scores, 16, 16, 0, rows, real, 1.4426950408889634 / math.sqrt(128) / 8 / 1, True)


def reference(attn_weights_slice, reshaped_block_size, segment_size, chunk_start, chunk_end, real_q_len, scale,
              is_causal=True):
    b, h, rows, cols = attn_weights_slice.shape
    bs = reshaped_block_size
    if rows % bs or cols % segment_size or segment_size % bs:
        raise ValueError("rows and columns must be multiples of the block and segment sizes")
    if is_causal and chunk_start + rows > cols:  # the query chunk ends at or before the last key (xattn_estimate's)
        raise ValueError("a causal query chunk must end at or before the last key: chunk_start + rows <= columns")
    x = attn_weights_slice.double() * scale * math.log(2.0)
    pos = chunk_start + torch.arange(rows, device=x.device)[:, None]
    if is_causal:
        x = x.masked_fill(torch.arange(cols, device=x.device)[None, :] > pos, float("-inf"))
    p = torch.softmax(x, dim=-1).masked_fill(pos >= real_q_len, 0.0)
    return p.reshape(b, h, rows // bs, bs, cols // bs, bs).sum(dim=(3, 5)).to(attn_weights_slice.dtype)
