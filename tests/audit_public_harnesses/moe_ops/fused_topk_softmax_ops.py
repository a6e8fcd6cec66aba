# Audit harness for tests/audit_public_corpus/moe_ops/fused_topk_softmax_ops.py (moe-ops's
# moe_ops/fused_topk_softmax_ops.py): fused_topk_softmax(logits, K) -> (weights [tokens, K] in logits' dtype, indices
# [tokens, K] int32): the top-K router logits of each token (largest first) and the softmax over those K. Called as the
# package's README and its MoE layer (tests/test_correctness.py, _SingleGpuMoE.forward) call it: the router logits
# [tokens, E] (contiguous), fp32_routing left False; the README's E 64 and K 6 (DeepSeek-MoE's 64 routed experts,
# top-6), 40 tokens. The logits are float32, a router computed in float32 (x.float() @ w_router.float().T, as the
# package's own test builds its reference, and DeepSeek's gate does): under Triton 3.9's interpreter tl.argmax of a
# bf16 tensor compares bit patterns (argmax of [0.5, -1, 2, 1.5] in bf16 is 1), so a bf16 example would show the
# interpreter's fault, not the kernel's (the kernel is right for bf16 on a GPU: the package's test checks it). The logits are distinct (a random ranking of E levels 0.05
# apart plus a little noise), so the top-K set and its order are unique in bf16 and the reference's torch.topk agrees
# with the kernel's argmax on which index comes first. The reference is torch.topk then softmax in float32, in
# logits' dtype (as the package's test compares it). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "fused_topk_softmax"
AUDIT_SHAPE = (40, 64)  # tokens, experts E
TOP_K = 6
TOLERANCES = {"float32": (1e-5, 1e-5)}  # float32 exp and sum over K values


def make_inputs(case):
    t, e = case.shape
    rank = case.rand(t, e, dtype=torch.float32).argsort(dim=-1).float()  # a random ranking of the experts per token
    logits = 0.05 * (rank - e / 2) + 0.002 * case.rand(t, e, dtype=torch.float32)
    return (logits, min(TOP_K, e))


def reference(logits, K, fp32_routing=False):
    if logits.dim() != 2 or not 0 < K <= logits.shape[1]:
        raise ValueError("logits [tokens, E] and 0 < K <= E")
    x = logits.float() if fp32_routing else logits
    vals, idx = torch.topk(x.float(), K, dim=-1)
    return torch.softmax(vals, dim=-1).to(x.dtype), idx.to(torch.int32)
