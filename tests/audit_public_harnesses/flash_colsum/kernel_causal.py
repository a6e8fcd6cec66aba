# Audit harness for tests/audit_public_corpus/flash_colsum/kernel_causal.py: _flash_colsum_causal(Q, K, scale) ->
# [1, K_len] fp16, the causal attention column means for a short query against a long key cache: key j is visible to
# query row i when j <= K_len - Q_len + i (the keys hold [past | the queries' own keys]), softmax(Q K^T * scale) over
# the visible keys, averaged over the heads and the query rows. Called as flash-colsum's public flash_colsum(query,
# key, is_causal=True) calls it (ops.py: scale = 1 / sqrt(D), batch 1 enforced): the README's "causal (GPT,
# retrieval...)" use, an LLM layer's last Q_len query tokens against its K_len keys, [1, H, Q_len, D] and
# [1, H, K_len, D] fp16 with a decoder's head_dim 128; the README's own example is Q [1, 32, 128, 128] against
# K [1, 32, 4096, 128]. Here 2 heads, 32 queries, 320 keys (the interpreter's budget), head_dim 128. The file imports
# only torch and triton: no stand-in.
import torch

ENTRY = "_flash_colsum_causal"
AUDIT_SHAPE = (2, 32, 320, 128)  # heads, query tokens, key tokens, head_dim (Llama-style decoder)
TOLERANCES = {"float16": (2e-3, 2e-5)}  # fp32 softmax and sums, one fp16 rounding of a mean ~1/K_len


def make_inputs(case):
    h, q_len, k_len, d = case.shape
    q = case.randn(1, h, q_len, d, dtype=torch.float16)
    k = case.randn(1, h, k_len, d, dtype=torch.float16)
    return (q, k, 1.0 / d ** 0.5)


def reference(Q, K, scale):
    if Q.ndim != 4 or K.ndim != 4 or Q.shape[0] != 1 or Q.shape[1] != K.shape[1] or Q.shape[3] != K.shape[3]:
        raise ValueError("Q [1, H, Q_len, D] and K [1, H, K_len, D]")
    q_len, k_len = Q.shape[2], K.shape[2]
    past = max(0, k_len - q_len)
    visible = torch.arange(k_len, device=Q.device)[None, :] <= past + torch.arange(q_len, device=Q.device)[:, None]
    s = (Q.double() @ K.double().transpose(-2, -1) * scale).masked_fill(~visible, float("-inf"))
    return torch.softmax(s, dim=-1).mean(-2).mean(1).to(torch.float16)
