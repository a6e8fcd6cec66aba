# Audit harness for tests/audit_public_corpus/conch_triton_kernels/rotary_embedding.py: rotary_embedding_launcher(
# positions, query, key, head_size, cos_sin_cache, *, is_neox=True), in place: for each token t and head, the NeoX
# rotation of the first rot_dim = cos_sin_cache.shape[-1] entries of the head: with cos, sin = the two halves of
# cos_sin_cache[positions[t]], x = head[:rot_dim / 2], y = head[rot_dim / 2:rot_dim], x <- x cos - y sin and
# y <- y cos + x sin (the rest of the head stays); the port of vLLM's rotary_embedding (NeoX style only). Called as
# vLLM's RotaryEmbedding.forward_cuda calls ops.rotary_embedding: positions int64 [num_tokens], query [num_tokens,
# heads * head_size] and key [num_tokens, kv_heads * head_size] the q and k of qkv.split(...) (views whose rows are
# strided by the qkv width), head_size 128, cos_sin_cache [max_position, rot_dim] in the query's dtype (fp16 here;
# vLLM casts the cache to it), rot_dim = head_size, theta 10000, random positions below 256. The reference is vLLM's
# numerics (products and sums in the query's dtype). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "rotary_embedding_launcher"
AUDIT_SHAPE = (7, 4, 2, 128)  # num_tokens, query heads, kv heads, head_size
MAX_POSITION = 256


def make_inputs(case):
    t, h, kvh, d = case.shape
    qkv = case.randn(t, (h + 2 * kvh) * d, dtype=torch.float16)
    query, key = qkv[:, : h * d], qkv[:, h * d:(h + kvh) * d]
    half = d // 2
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, half, dtype=torch.float32) * 2 / max(d, 1)))
    freqs = torch.arange(MAX_POSITION, dtype=torch.float32)[:, None] * inv_freq[None, :]
    cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(torch.float16).to(case.device)  # [max_pos, 2 * half]
    g = torch.Generator().manual_seed(case.seed)
    positions = torch.randint(0, MAX_POSITION, (t,), generator=g).to(case.device)
    return (positions, query, key, d, cache)


def _rotate(x, positions, head_size, cache):
    # vLLM's numerics: x * cos - y * sin in the tensors' dtype (c10::Half products and sums, each rounded)
    rot = cache.shape[-1]
    half = rot // 2
    t = x.shape[0]
    heads = x.reshape(t, -1, head_size).clone()
    cos = cache[positions.long(), :half][:, None, :].to(x.dtype)
    sin = cache[positions.long(), half:2 * half][:, None, :].to(x.dtype)
    a, b = heads[..., :half].clone(), heads[..., half:2 * half].clone()
    heads[..., :half] = a * cos - b * sin
    heads[..., half:2 * half] = b * cos + a * sin
    return heads.reshape(t, -1)


def reference(positions, query, key, head_size, cos_sin_cache, *, is_neox=True):
    if not is_neox:
        raise ValueError("NeoX style only")
    query.copy_(_rotate(query, positions, head_size, cos_sin_cache))
    key.copy_(_rotate(key, positions, head_size, cos_sin_cache))
