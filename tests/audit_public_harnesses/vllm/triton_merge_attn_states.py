# Audit harness for tests/audit_public_corpus/vllm/triton_merge_attn_states.py: merge_attn_states(output,
# prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse) merges two partial attention outputs
# [tokens, heads, head_size] by their log-sum-exps (lse [heads, tokens]), in place into output and output_lse.
# The file imports vllm.triton_utils (triton, tl) and vllm.platforms (for the fp8 dtype's range): stand-ins.
import sys
import types

import torch
import triton
import triton.language as tl

_names = ("vllm", "vllm.triton_utils", "vllm.platforms")
_vllm, _tu, _pl = (types.ModuleType(n) for n in _names)
_tu.triton, _tu.tl = triton, tl
_pl.current_platform = types.SimpleNamespace(fp8_dtype=lambda: torch.float8_e4m3fn)
_vllm.triton_utils, _vllm.platforms = _tu, _pl
for _name, _mod in zip(_names, (_vllm, _tu, _pl), strict=True):
    sys.modules.setdefault(_name, _mod)

ENTRY = "merge_attn_states"
AUDIT_SHAPE = (5, 3, 40)


def make_inputs(case):
    t, h, d = case.shape
    out = torch.empty((t, h, d), device=case.device, dtype=case.dtype)
    out_lse = torch.empty((h, t), device=case.device, dtype=torch.float32)
    return (out, case.randn(t, h, d), case.randn(h, t, dtype=torch.float32), case.randn(t, h, d),
            case.randn(h, t, dtype=torch.float32), out_lse)


def reference(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None):
    lse = torch.logaddexp(prefix_lse, suffix_lse)  # [heads, tokens]
    p = torch.exp(prefix_lse - lse).T[..., None]
    s = torch.exp(suffix_lse - lse).T[..., None]
    output.copy_(prefix_output.float() * p + suffix_output.float() * s)
    if output_lse is not None:
        output_lse.copy_(lse)
