# Audit harness for tests/audit_public_corpus/lmdeploy/apply_rotary_pos_emb.py: apply_rotary_pos_emb(q, k, cos, sin)
# -> (q_embed, k_embed), rotate-half RoPE on q [seq, heads, dim] and k [seq, kv_heads, dim] with cos/sin [seq, dim].
import torch

ENTRY = "apply_rotary_pos_emb"
AUDIT_SHAPE = (7, 4, 64)


def make_inputs(case):
    s, h, d = case.shape
    kv = max(1, h // 2)
    pos = torch.arange(s, dtype=torch.float32)[:, None]
    freq = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32)[: (d + 1) // 2] / max(d, 1)))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)[:, :d]
    return (case.randn(s, h, d), case.randn(s, kv, d), ang.cos().to(case.device, case.dtype),
            ang.sin().to(case.device, case.dtype))


def _rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


def reference(q, k, cos, sin):
    return _rope(q, cos, sin), _rope(k, cos, sin)
