# Audit harness for tests/audit_public_corpus/conch_triton_kernels/reshape_and_cache.py: reshape_and_cache_launcher(
# key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None, v_scale=None, strict=False),
# in place: for each token t with slot s = slot_mapping[t] >= 0, key_cache[s // block, s % block] = key[t] and the
# same for value (a negative slot, vLLM's padding token, is skipped): the port of vLLM's reshape_and_cache_flash.
# Called as vLLM's attention backends call it on every layer: key and value [num_tokens, num_kv_heads, head_size]
# are views of the qkv projection (q, k, v = qkv.split(...); .view(-1, kv_heads, head_size): rows strided by the qkv
# width), the caches [num_pages, block_size, num_kv_heads, head_size] (the flash / NHD layout, contiguous), int64
# slot_mapping of distinct slots with -1 for padding, kv_cache_dtype "auto" (fp16 caches here, as the model dtype),
# head_size 128, block_size 16. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "reshape_and_cache_launcher"
AUDIT_SHAPE = (7, 4, 2, 128)  # num_tokens, query heads, kv heads, head_size
BLOCK = 16
PAGES = 4


def make_inputs(case):
    t, h, kvh, d = case.shape
    qkv = case.randn(t, (h + 2 * kvh) * d, dtype=torch.float16)
    key = qkv[:, h * d:(h + kvh) * d].view(t, kvh, d)
    value = qkv[:, (h + kvh) * d:].view(t, kvh, d)
    g = torch.Generator().manual_seed(case.seed)
    n_slots = max(PAGES * BLOCK, t)
    slots = torch.randperm(n_slots, generator=g)[:t]
    if t > 2:
        slots[t // 2] = -1  # a padding token
    pages = n_slots // BLOCK + (n_slots % BLOCK > 0)
    key_cache = case.randn(pages, BLOCK, kvh, d, dtype=torch.float16)  # earlier tokens' entries stay
    value_cache = case.randn(pages, BLOCK, kvh, d, dtype=torch.float16)
    return (key, value, key_cache, value_cache, slots.to(case.device))


def reference(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None, v_scale=None,
              strict=False):
    block = key_cache.shape[1]
    for t, s in enumerate(slot_mapping.tolist()):
        if s >= 0:
            key_cache[s // block, s % block] = key[t]
            value_cache[s // block, s % block] = value[t]
