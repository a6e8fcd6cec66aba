# Audit harness for tests/audit_public_corpus/flashinfer/triton_compact.py: compact_topk_ids(topk_ids,
# compact_topk_ids, weight_expert_ids, active_expert_count), in place: each routed pair (id >= 0) of the flat int32
# expert ids gets the dense local index of its expert in order of first appearance (-1 for an unrouted, negative id),
# weight_expert_ids[j] the global id of local expert j (entries past the count untouched), active_expert_count[0] the
# number of distinct routed experts. Called as fused_moe/cute_dsl/blackwell_sm12x/moe_dispatch.py calls it for the
# micro MoE path (2 to 8 tokens): topk_ids.view(-1).to(int32) of the router's top-k (distinct experts per token), the
# workspace's compact_topk_ids[:numel] and its weight_expert_ids [experts] and micro_active_expert_count [1] int32
# buffers. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "compact_topk_ids"
AUDIT_SHAPE = (4, 8, 64)  # tokens, top_k, experts


def make_inputs(case):
    t, k, e = case.shape
    scores = case.randn(t, max(e, k), dtype=torch.float32)
    ids = scores.topk(k, dim=-1).indices.to(torch.int32).reshape(-1) if t * k else \
        torch.zeros(0, dtype=torch.int32, device=scores.device)
    return (ids, torch.zeros(t * k, dtype=torch.int32, device=scores.device),
            torch.zeros(max(e, k), dtype=torch.int32, device=scores.device),
            torch.zeros(1, dtype=torch.int32, device=scores.device))


def reference(topk_ids, compact_topk_ids, weight_expert_ids, active_expert_count):
    first = {}
    for i, g in enumerate(topk_ids.reshape(-1).tolist()):
        if g >= 0:
            first.setdefault(g, len(first))
            compact_topk_ids[i] = first[g]
        else:
            compact_topk_ids[i] = -1
    for g, j in first.items():
        weight_expert_ids[j] = g
    active_expert_count[0] = len(first)
