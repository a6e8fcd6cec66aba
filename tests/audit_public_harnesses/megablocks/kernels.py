# Audit harness for tests/audit_public_corpus/megablocks/kernels.py: gather(x, indices, bin_ids, weights, bins, top_k)
# -> out [tokens * top_k, hidden], out[i] = x[indices[i] // top_k] * weights[indices[i]] (the MoE permutation: the
# file's comments give x (tokens, hidden), indices/bin_ids/weights (tokens * top_k), bins (num_experts); megablocks'
# ops build them as `bin_ids, indices = sort(top_experts.flatten())` and `bins = cumsum(histogram(top_experts))`,
# int32). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "gather"
AUDIT_SHAPE = (6, 100)  # 6 tokens of hidden 100, top_k 2 of 4 experts
TOP_K, EXPERTS = 2, 4


def make_inputs(case):
    t, h = case.shape
    x = case.randn(t, h)
    top = case.randint(0, EXPERTS, (t * TOP_K,))
    bin_ids, indices = torch.sort(top, stable=True)
    bins = torch.cumsum(torch.bincount(top, minlength=EXPERTS), 0)
    weights = case.rand(t * TOP_K)
    return (x, indices.to(torch.int32), bin_ids.to(torch.int32), weights, bins.to(torch.int32), TOP_K)


def reference(x, indices, bin_ids, weights, bins, top_k):
    idx = indices.long()
    out = x[idx // top_k]
    return out if weights is None else out * weights[idx][:, None]
