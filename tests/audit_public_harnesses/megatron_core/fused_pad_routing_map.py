# Audit harness for tests/audit_public_corpus/megatron_core/fused_pad_routing_map.py: fused_pad_routing_map(routing_map,
# pad_multiple) -> the routing map [num_tokens, num_experts] with, in each expert's column, the first k zeros (in token
# order) set to 1, k = (-count) % pad_multiple, count the column's ones (every zero when there are fewer than k), as an
# int32 map. Called as megatron's MoE token dispatchers call it with moe_router_padding_for_quantization (and the
# experimental permute fusion): the router's bool routing map (top-k of each token's scores), pad_multiple from
# get_align_size_for_quantization (16 for fp8, 32 for mxfp8); the dispatchers use the result as a mask (.bool(),
# .to(int8), sums). The file imports megatron.core.jit.jit_fuser (torch.compile with torch >= 2.2, which would compile
# the launch for the CPU here) and megatron.core.utils.null_decorator, not installed here: stand-ins, jit_fuser as
# megatron's own disable_jit_fuser() leaves it (noop_decorator), null_decorator as defined in megatron/core/utils.py.
import sys
import types

import torch


def null_decorator(*args, **kwargs):  # megatron/core/utils.py
    if len(kwargs) == 0 and len(args) == 1 and callable(args[0]):
        return args[0]

    def inner(func):
        return func

    return inner


def noop_decorator(func):  # megatron/core/jit.py
    return func


for _name in ("megatron", "megatron.core", "megatron.core.utils", "megatron.core.jit"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["megatron.core.utils"].null_decorator = null_decorator
sys.modules["megatron.core.jit"].jit_fuser = noop_decorator

ENTRY = "fused_pad_routing_map"
AUDIT_SHAPE = (40, 6)  # 40 tokens, 6 experts (top-2 routing), pad_multiple 16


def make_inputs(case):
    t, e = case.shape
    k = min(2, e)
    scores = case.randn(t, e, dtype=torch.float32)
    top = scores.topk(k, dim=-1).indices if k else scores.new_zeros(t, 0, dtype=torch.long)
    routing_map = torch.zeros(t, e, dtype=torch.bool, device=scores.device).scatter_(1, top, True)
    return (routing_map, 16)


def reference(routing_map, pad_multiple):
    if routing_map.shape[0] == 0:
        return routing_map  # the entry returns an empty map unchanged
    m = routing_map.transpose(0, 1).to(torch.int64)  # [experts, tokens]
    need = (-m.sum(dim=1)) % pad_multiple
    zero_rank = torch.cumsum((m == 0).to(torch.int64), dim=1)
    out = torch.where((m == 0) & (zero_rank <= need[:, None]), torch.ones_like(m), m)
    return out.transpose(0, 1).to(torch.int32)
