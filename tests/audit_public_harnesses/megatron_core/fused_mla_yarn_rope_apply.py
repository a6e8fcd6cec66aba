# Audit harness for tests/audit_public_corpus/megatron_core/fused_mla_yarn_rope_apply.py: fused_apply_mla_rope_for_q(t,
# cos, sin, qk_head_dim, emb_dim) -> t, written in place: for q [seq_len, batch, heads, qk_head_dim + emb_dim] (sbhd),
# the first qk_head_dim columns unchanged, the last emb_dim de-interleaved (x1 = even, x2 = odd columns) and rotated:
# [x1 * cos[:h] - x2 * sin[:h], x2 * cos[h:] + x1 * sin[h:]], h = emb_dim // 2, with the row of cos/sin
# [max_seq_len, 1, 1, emb_dim] at the token's position (megatron's unfused apply_rotary_pos_emb with
# multi_latent_attention). Called as MLASelfAttention.qkv_up_proj_and_rope_apply calls it with apply_rope_fusion:
# q a view of the up-projection's output (contiguous), cos/sin from YarnRotaryEmbedding.get_cached_cos_sin (emb =
# cat(freqs, freqs); cos(emb) * mscale in q's dtype, contiguous), no packing (cu_seqlens_q None), no context parallel.
# The file imports megatron.core.utils.null_decorator, not installed here: a stand-in (megatron's definition).
import math
import sys
import types

import torch


def null_decorator(*args, **kwargs):  # megatron/core/utils.py
    if len(kwargs) == 0 and len(args) == 1 and callable(args[0]):
        return args[0]

    def inner(func):
        return func

    return inner


for _name in ("megatron", "megatron.core", "megatron.core.utils"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["megatron.core.utils"].null_decorator = null_decorator

ENTRY = "fused_apply_mla_rope_for_q"
AUDIT_SHAPE = (6, 2, 4, 16, 8)  # seq_len, batch, heads, qk_head_dim, emb_dim (DeepSeek: 128 and 64)


def make_inputs(case):
    s, b, h, dq, de = case.shape
    half = max(de // 2, 1)
    inv = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) * 2 / max(de, 1)))
    freqs = torch.arange(s, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)[:, :de][:, None, None, :]
    mscale = 0.1 * math.log(40) + 1.0  # yarn's _yarn_get_mscale at scaling factor 40
    cos = (emb.cos() * mscale).to(device=case.device, dtype=case.dtype).contiguous()
    sin = (emb.sin() * mscale).to(device=case.device, dtype=case.dtype).contiguous()
    return (case.randn(s, b, h, dq + de), cos, sin, dq, de)


def reference(t, cos, sin, qk_head_dim, emb_dim):
    if t.shape[-1] != qk_head_dim + emb_dim or emb_dim % 2 or cos.shape[-1] != emb_dim:
        raise ValueError("the last dim must be qk_head_dim + emb_dim (emb_dim even, as cos/sin)")
    s, h = t.shape[0], emb_dim // 2
    c = cos.reshape(cos.shape[0], emb_dim)[:s][:, None, None, :]
    sn = sin.reshape(sin.shape[0], emb_dim)[:s][:, None, None, :]
    pe = t[..., qk_head_dim:]
    x1, x2 = pe[..., 0::2], pe[..., 1::2]
    left = x1 * c[..., :h] - x2 * sn[..., :h]
    right = x2 * c[..., h:] + x1 * sn[..., h:]
    return torch.cat([t[..., :qk_head_dim], left, right], dim=-1)
