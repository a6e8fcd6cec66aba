# Audit harness for tests/audit_public_corpus/unsloth_zoo/moe_grouped_fp16.py: grouped_linear(x, w, counts,
# out_dtype=None) = _GroupedLinear.apply -> y [M, N], y[m] = x[m] @ w[e(m)].T for x [M, K] whose rows are sorted by
# expert (counts[e] rows of expert e, in order, counts summing to M), w [E, N, K], in out_dtype (x's dtype by default),
# accumulated in fp32. Called as unsloth-zoo's gpt-oss grouped QLoRA calls it on float16 GPUs
# (gpt_oss_grouped_qlora._lora_add_fp16: grouped_linear(x.to(float16), A, counts), A the stacked LoRA A [E, r, K] in
# fp16, counts the per-expert token counts from count_tokens_per_expert, int32 on the device), in training (its
# backward runs the same grouped GEMM for dX and the per-expert wgrad kernel for dW). fp16 operands: the file's own
# dtype, and bfloat16 tl.dot is not exact under Triton 3.9's CPU interpreter (a 16x16 bf16 dot is off by ~1e10 there,
# fp16 and fp32 agree). The backend is Triton for a CPU tensor (use_cublas: device.type == "cuda" only), as on sm80+
# GPUs other than sm89. The reference is differentiable, so the grad probe runs the backward. The file imports only
# torch and triton: no stand-in.
import torch

ENTRY = "grouped_linear"
AUDIT_SHAPE = (24, 4, 32, 40)  # M routed rows, E experts, K in features, N out features (the LoRA rank for A)
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 accumulation, one fp16 rounding of the output


def make_inputs(case):
    m, e, k, n = case.shape
    experts = case.randint(0, max(e - 1, 1), (m,))  # the last expert gets no rows (an empty expert, as routing gives)
    counts = torch.bincount(experts.cpu(), minlength=e)[:e].to(torch.int32).to(case.device)
    x = case.randn(m, k).to(torch.float16)
    w = (case.randn(e, n, k) * 0.1).to(torch.float16)
    return (x, w, counts)


def reference(x, w, counts, out_dtype=None):
    if x.dim() != 2 or w.dim() != 3 or w.shape[2] != x.shape[1] or counts.numel() != w.shape[0]:
        raise ValueError("x [M, K], w [E, N, K], counts [E]")
    c = counts.long().cpu()
    if bool((c < 0).any()) or int(c.sum()) != x.shape[0]:
        raise ValueError("counts must be the rows of each expert, summing to M")
    e_of = torch.repeat_interleave(torch.arange(w.shape[0]), c).to(x.device)
    y = torch.einsum("mk,mnk->mn", x.float(), w.float()[e_of])
    return y.to(out_dtype or x.dtype)
