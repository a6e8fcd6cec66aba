# Audit harness for tests/audit_public_corpus/vllm/gumbel.py: apply_temperature(logits, expanded_idx_mapping,
# temperature) divides, in place, each token's logits [tokens, vocab] by its request's temperature (0 greedy and 1
# leave them); expanded_idx_mapping [tokens] maps a token to its request state. The file imports vllm.triton_utils
# (triton, tl) and draft_logits_row (a jit helper of other kernels of the file): stand-ins.
import sys
import types

import torch
import triton
import triton.language as tl

_names = ("vllm", "vllm.triton_utils", "vllm.v1", "vllm.v1.worker", "vllm.v1.worker.gpu",
          "vllm.v1.worker.gpu.spec_decode", "vllm.v1.worker.gpu.spec_decode.draft_logits")
_mods = [types.ModuleType(n) for n in _names]
_mods[1].triton, _mods[1].tl = triton, tl


@triton.jit
def draft_logits_row(req_state_idx, mapping_ptr):
    return tl.load(mapping_ptr + req_state_idx)


_mods[-1].draft_logits_row = draft_logits_row
for _name, _mod in zip(_names, _mods, strict=True):
    sys.modules.setdefault(_name, _mod)

ENTRY = "apply_temperature"
AUDIT_SHAPE = (4, 300)


def make_inputs(case):
    t, v = case.shape
    temp = torch.tensor([0.7, 1.0, 0.0, 1.5] * t, dtype=torch.float32)[:t].to(case.device)
    return (case.randn(t, v), torch.arange(t, dtype=torch.int32, device=case.device), temp)


def reference(logits, expanded_idx_mapping, temperature):
    tmp = temperature[expanded_idx_mapping.long()].float()[:, None]
    keep = (tmp == 0) | (tmp == 1)
    logits.copy_(torch.where(keep, logits.float(), logits.float() / torch.where(keep, 1.0, tmp)))
