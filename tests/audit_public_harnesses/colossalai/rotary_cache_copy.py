# Audit harness for tests/audit_public_corpus/colossalai/rotary_cache_copy.py: get_xine_cache(lengths, cos_cache,
# sin_cache, is_prompts=False) -> (cos, sin). Decoding (the default, every generated token): row i is the cache row
# of sequence i's last position, cos_cache[lengths[i] - 1]; prefill (is_prompts=True): each sequence's rows 0 ..
# lengths[i] - 1, concatenated. cos_cache/sin_cache [max_position, head_dim]. Called as colossalai's nopadding_llama
# calls it at each decoding step. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "get_xine_cache"
AUDIT_SHAPE = (5, 64, 16)  # 5 sequences, 64 cached positions, head_dim 16


def make_inputs(case):
    b, p, d = case.shape
    lengths = case.randint(1, p + 1, (b,), dtype=torch.int32)
    return (lengths, case.randn(p, d), case.randn(p, d))


def reference(lengths, cos_cache, sin_cache, is_prompts=False):
    n = lengths.long()
    if bool((n < 1).any()) or bool((n > cos_cache.shape[0]).any()):
        raise ValueError("lengths must be in 1 .. max_position")
    if is_prompts:
        pos = torch.cat([torch.arange(int(x)) for x in n.tolist()] or [n[:0]]).to(cos_cache.device)
    else:
        pos = n - 1
    return cos_cache[pos], sin_cache[pos]
