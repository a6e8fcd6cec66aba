# Audit harness for tests/audit_public_corpus/megatron_core/batch_invariant_kernels.py: matmul_persistent(a, b,
# bias=None) -> a @ b (+ bias), a [M, K], b [K, N], bias [N], in a's dtype (fp32 accumulation). Called as
# batch-invariant mode calls it: it replaces aten::mm and aten::addmm (mm_batch_invariant, addmm_batch_invariant), so
# F.linear(x, w, bias) reaches it as addmm(bias, x, w.t()): b the transposed weight (a view of [N, K]), bias 1-D. The
# file imports only torch, triton and the standard library (get_compute_units falls back to torch.get_num_threads()
# on the CPU): no stand-in.

ENTRY = "matmul_persistent"
AUDIT_SHAPE = (20, 48, 40)  # M tokens, K in features, N out features


def make_inputs(case):
    m, k, n = case.shape
    w = case.randn(n, k)
    return (case.randn(m, k), w.t(), case.randn(n))


def reference(a, b, bias=None):
    if a.shape[1] != b.shape[0] or (bias is not None and bias.shape != (b.shape[1],)):
        raise ValueError("a [M, K] @ b [K, N] (+ bias [N])")
    out = a.double() @ b.double()
    if bias is not None:
        out = out + bias.double()
    return out.to(a.dtype)
