# Audit harness for tests/audit_public_corpus/xtuner/rotary.py: apply_rotary_emb(x, cos, sin) = ApplyRotaryEmb.apply ->
# x rotated (rotate-half RoPE, not interleaved): with h = headdim // 2, out[..., :h] = x0 * cos - x1 * sin and
# out[..., h:] = x0 * sin + x1 * cos, x0 = x[..., :h], x1 = x[..., h:], cos and sin [seqlen, headdim] one row per token
# (the kernel reads the first half of each row; HF tables repeat it in the second). Called as xtuner's varlen
# InternLM attention calls it (model/modules/dispatch/internlm.py): x = q_proj(h).view(1, q_len, heads, head_dim),
# cos = rotary_emb(v, max_seqlen)[0][position_ids].squeeze(0) (the table gathered at each packed sequence's positions,
# in x's dtype), in training (its backward rotates the gradient back). The file imports
# xtuner.utils.device.get_torch_device, not installed here: a stand-in with xtuner's own body (torch.cuda, whose
# device(index) context is a no-op for a CPU tensor's index None).
import sys
import types

import torch


def get_torch_device():  # xtuner/utils/device.py, CUDA branch (the NPU one left out)
    return torch.cuda


for _name in ("xtuner", "xtuner.utils", "xtuner.utils.device"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["xtuner.utils.device"].get_torch_device = get_torch_device

ENTRY = "apply_rotary_emb"
AUDIT_SHAPE = (1, 20, 4, 16)  # batch (1 in xtuner's packed varlen path), tokens, heads, head_dim


def make_inputs(case):
    b, s, h, d = case.shape
    a = s // 2
    position_ids = torch.cat([torch.arange(a), torch.arange(s - a)])  # two packed sequences
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / max(d, 1)))
    freqs = torch.arange(max(s, 1), dtype=torch.float32)[:, None] * inv
    emb = torch.cat([freqs, freqs], dim=-1)
    cos = emb.cos()[position_ids].to(device=case.device, dtype=case.dtype)
    sin = emb.sin()[position_ids].to(device=case.device, dtype=case.dtype)
    return (case.randn(b, s, h, d), cos, sin)


def reference(x, cos, sin, interleaved=False, inplace=False, seqlen_offsets=0, cu_seqlens=None, max_seqlen=None):
    d = cos.shape[-1]
    xr, xp = x[..., :d].double(), x[..., d:]
    x0, x1 = xr[..., : d // 2], xr[..., d // 2:]
    c, s = cos.double()[None, :, None, :], sin.double()[None, :, None, :]
    rot = torch.cat([-x1, x0], dim=-1)
    return torch.cat([(xr * c + rot * s).to(x.dtype), xp], dim=-1)
