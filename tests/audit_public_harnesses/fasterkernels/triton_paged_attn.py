# Audit harness for tests/audit_public_corpus/fasterkernels/triton_paged_attn.py (fasterkernels' fskernels/paged_attn/
# triton_paged_attn.py): paged_flash_decode(q, k_pool, v_pool, block_table, seq_lens, page_size) -> [B, Q_H, D]: one
# decode step of grouped-query attention over a paged KV cache, one program per (sequence, KV head) walking the
# sequence's logical pages through its block-table row. Called as the package's PagedKVCache documents it
# (paged_attn/paged_kv_cache.py, its class docstring and get_block_table_tensor / get_seq_lens_tensor):
# paged_flash_decode(q, cache.k_pool[layer], cache.v_pool[layer], block_table, seq_lens, PAGE_SIZE): q [n_active, Q_H,
# D], pools [num_pages, KV_H, 16, D] bf16 (PagedKVCache.from_config's dtype), block_table the active rows of the cache's
# int32 [max_seqs, max_blocks_per_seq] table (-1 where unallocated; pages handed out from the end of a free list),
# seq_lens int32, PAGE_SIZE 16. 3 sequences of 70, 16 and 5 tokens, Q_H 8, KV_H 2, head_dim 128, 64 pages, 32 blocks per
# sequence (cut for the interpreter from from_config's 4096 and 512). The reference gathers each sequence's tokens
# through its block table and attends in float64. The file imports only torch and triton: no stand-in.
import math

import torch

ENTRY = "paged_flash_decode"
AUDIT_SHAPE = (3, 8, 2, 128)  # sequences, query heads, KV heads, head_dim
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}  # bf16 operands and P, fp32 accumulation
PAGE_SIZE = 16
NUM_PAGES = 64
MAX_BLOCKS = 32
LENS = (70, 16, 5)


def make_inputs(case):
    b, hq, hk, d = case.shape
    lens = [LENS[i % len(LENS)] for i in range(b)]
    k_pool = case.randn(NUM_PAGES, hk, PAGE_SIZE, d, dtype=torch.bfloat16)
    v_pool = case.randn(NUM_PAGES, hk, PAGE_SIZE, d, dtype=torch.bfloat16)
    block_table = torch.full((b, MAX_BLOCKS), -1, dtype=torch.int32)
    free = list(range(NUM_PAGES))
    for i, n in enumerate(lens):
        for p in range(-(-n // PAGE_SIZE)):
            block_table[i, p] = free.pop()  # PagedKVCache._alloc_page pops from the end of its free list
    q = case.randn(b, hq, d, dtype=torch.bfloat16)
    seq_lens = torch.tensor(lens, dtype=torch.int32)
    return (q, k_pool, v_pool, block_table.to(q.device), seq_lens.to(q.device), PAGE_SIZE)


def reference(q, k_pool, v_pool, block_table, seq_lens, page_size):
    b, hq, d = q.shape
    hk = k_pool.shape[1]
    if hq % hk or k_pool.shape[2] != page_size or seq_lens.numel() != b:
        raise ValueError("q [B, Q_H, D], pools [pages, KV_H, page_size, D], seq_lens [B]")
    out = torch.empty(b, hq, d, dtype=torch.float64, device=q.device)
    for i in range(b):
        n = int(seq_lens[i])
        pages = block_table[i, : -(-n // page_size)].long()
        kk = k_pool[pages].double().permute(1, 0, 2, 3).reshape(hk, -1, d)[:, :n]  # [KV_H, T, D]
        vv = v_pool[pages].double().permute(1, 0, 2, 3).reshape(hk, -1, d)[:, :n]
        kk, vv = kk.repeat_interleave(hq // hk, dim=0), vv.repeat_interleave(hq // hk, dim=0)
        p = torch.softmax(torch.einsum("hd,htd->ht", q[i].double(), kk) / math.sqrt(d), dim=-1)
        out[i] = torch.einsum("ht,htd->hd", p, vv)
    return out.to(q.dtype)
