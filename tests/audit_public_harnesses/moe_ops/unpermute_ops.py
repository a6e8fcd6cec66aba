# Audit harness for tests/audit_public_corpus/moe_ops/unpermute_ops.py (moe-ops's moe_ops/unpermute_ops.py):
# unpermute(input, row_id_map, prob, num_tokens, num_topK) -> out [num_tokens, cols], out[t] = sum over k of
# prob[t, k] * input[row_id_map[k * num_tokens + t]] (fp32 accumulation, stored in input's dtype): the expert outputs
# gathered back into token order, weighted by the routing weights. Called as the package's README and its MoE layer
# (tests/test_correctness.py, _SingleGpuMoE.forward) call it: input = the down projection's output [tokens * K,
# d_model] in expert-sorted order (contiguous, bf16), row_id_map the int32 [K * tokens] map permute returned (a
# bijection onto the rows; built here as a random permutation, what a counting sort of random routes gives), prob =
# fused_topk_softmax's weights [tokens, K] (bf16, the logits' dtype), num_tokens = x.shape[0], num_topK = K,
# max_tokens left at its default. Mixtral's top-2, d_model 512 (cut for the interpreter), 24 tokens. The reference is
# that sum in float64, rounded to input's dtype. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "unpermute"
AUDIT_SHAPE = (24, 2, 512)  # tokens, top-K, d_model
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}  # fp32 sums of K products, one bf16 rounding


def make_inputs(case):
    t, k, d = case.shape
    inp = case.randn(t * k, d, dtype=torch.bfloat16)
    row_id_map = case.rand(t * k, dtype=torch.float32).argsort().to(torch.int32)
    prob = torch.softmax(case.randn(t, k, dtype=torch.float32), dim=-1).to(torch.bfloat16)
    return (inp, row_id_map, prob, t, k)


def reference(input, row_id_map, prob, num_tokens, num_topK, max_tokens=-1):
    if row_id_map.numel() != num_tokens * num_topK or prob.shape != (num_tokens, num_topK):
        raise ValueError("row_id_map [K * tokens], prob [tokens, K]")
    rows = row_id_map.long().reshape(num_topK, num_tokens).T  # [tokens, K]
    out = (input.double()[rows] * prob.double()[..., None]).sum(dim=1)
    return out.to(input.dtype)
