# Audit harness for tests/audit_public_corpus/lmcache/block_sparse_attention.py: block_sparse_attention(query, key,
# value, block_indices, block_indptr, sm_scale, block_size=64) -> (output [M, H, D], lse [M, H] float32): for query
# block r (rows r*bs .. r*bs+bs-1), softmax(q k^T * sm_scale) v over the keys of the KV blocks block_indices[
# block_indptr[r]:block_indptr[r+1]] (keys past N masked), lse = log-sum-exp (natural log) of those scores; a query
# block with no KV block (or past the CSR rows) gets 0 and -inf. GQA: query head h reads KV head h * KV_H // H.
# Called as LMCTritonSparseBackend.forward_contiguous calls it for CacheBlend: query [M, H, D] the M recomputed
# (top-k) tokens, key/value [N, KV_H, D] the whole sequence, the CSR built as LMCTritonSparseMetadata.
# update_from_top_indices builds it (row r keeps the column blocks c < top_indices[r*32 + 31] // 32, a partial last
# row none), block_size = sparse_blk_row_size = 32, sm_scale = 1/sqrt(D). The file imports only torch and triton:
# no stand-in.
import math

import torch

ENTRY = "block_sparse_attention"
AUDIT_SHAPE = (40, 100, 4, 16)  # M recomputed tokens, N sequence length, H query heads (2 KV heads), head dim
BLOCK = 32  # sparse_blk_row_size == sparse_blk_col_size


def make_inputs(case):
    m, n, h, d = case.shape
    kvh = h // 2 if h % 2 == 0 else h
    top = torch.sort(torch.argsort(case.rand(max(n, m), dtype=torch.float32))[:m]).values  # top-k token positions
    rows, cols = (m + BLOCK - 1) // BLOCK, (n + BLOCK - 1) // BLOCK
    block_mask = torch.zeros(rows, cols, dtype=torch.bool, device=case.device)
    last = top[BLOCK - 1::BLOCK] // BLOCK
    block_mask[: len(last)] = torch.arange(cols, device=case.device)[None, :] < last[:, None]
    indptr = torch.zeros(rows + 1, dtype=torch.int32, device=case.device)
    torch.cumsum(block_mask.sum(1), 0, out=indptr[1:])
    indices = torch.where(block_mask)[1].to(torch.int32)
    return (case.randn(m, h, d), case.randn(n, kvh, d), case.randn(n, kvh, d), indices, indptr,
            1.0 / math.sqrt(max(d, 1)), BLOCK)


def reference(query, key, value, block_indices, block_indptr, sm_scale, block_size=64):
    m, h, d = query.shape
    n, kvh = key.shape[0], key.shape[1]
    if h % kvh:
        raise ValueError("query heads must be a multiple of the KV heads")
    out = torch.zeros(m, h, d, dtype=torch.float64, device=query.device)
    lse = torch.full((m, h), float("-inf"), dtype=torch.float64, device=query.device)
    kv_of = torch.arange(h, device=query.device) * kvh // h
    k, v = key.double()[:, kv_of], value.double()[:, kv_of]  # [N, H, D]
    ptr = block_indptr.tolist()
    for r in range(min(len(ptr) - 1, (m + block_size - 1) // block_size)):
        blocks = block_indices[ptr[r]:ptr[r + 1]].long().tolist()
        keys = [j for b in blocks for j in range(b * block_size, min((b + 1) * block_size, n))]
        if not keys:
            continue
        rs = slice(r * block_size, min((r + 1) * block_size, m))
        idx = torch.tensor(keys, device=query.device)
        s = torch.einsum("mhd,nhd->hmn", query.double()[rs], k[idx]) * sm_scale
        out[rs] = torch.einsum("hmn,nhd->mhd", torch.softmax(s, -1), v[idx])
        lse[rs] = torch.logsumexp(s, -1).transpose(0, 1)
    return out.to(query.dtype), lse.float()
