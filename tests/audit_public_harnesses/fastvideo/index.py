# Audit harness for tests/audit_public_corpus/fastvideo/index.py: map_to_index(block_map) -> (index, index_num): for
# each (batch, head, q block) row of the bool block map [bs, h, num_q_blocks, num_kv_blocks], index lists the kv
# blocks whose entry is True in increasing order, padded with -1 to num_kv_blocks (int32), and index_num counts them
# (int32 [bs, h, num_q_blocks]). Called as fastvideo-kernel's block-sparse attention calls it (block_sparse_attn.py
# _map_to_index, block_sparse_attn_256.py, block_sparse_attn_sm100a.py): the bool top-k mask of fused_topk_mask, a
# fixed number of True per row. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "map_to_index"
AUDIT_SHAPE = (2, 3, 5, 12)  # batch, heads, q blocks, kv blocks


def make_inputs(case):
    bs, h, nq, nkv = case.shape
    k = max(1, (nkv + 2) // 3)  # fastvideo's compute_topk at sparsity ~0.7
    scores = case.randn(bs, h, nq, nkv, dtype=torch.float32)
    top = scores.topk(min(k, nkv), dim=-1).indices
    return (torch.zeros(bs, h, nq, nkv, dtype=torch.bool, device=scores.device).scatter_(-1, top, True),)


def reference(block_map):
    m = block_map.bool()
    nkv = m.shape[-1]
    cols = torch.arange(nkv, device=m.device).expand(m.shape)
    key = torch.where(m, cols, cols + nkv)  # True entries first, each group in column order
    order = key.sort(dim=-1).values
    index = torch.where(order < nkv, order, torch.full_like(order, -1)).to(torch.int32)
    return index, m.sum(-1).to(torch.int32)
