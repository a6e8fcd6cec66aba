# Audit harness for tests/audit_public_corpus/lightning_attn/lightning_attn2_no_decay.py: lightning_attn2_no_decay(q,
# k, v) = LightningAttention2NoDecay.apply -> o [b, h, n, e], causal linear attention without decay:
# o[i] = sum_{j <= i} (q[i] . k[j]) * v[j], q and k [b, h, n, d], v [b, h, n, e]. Exported as
# lightning_attn.ops.lightning_attn2_no_decay; called here as lightning_attn2 is by the package's lightning_attn_func
# (whose own s=None branch for d <= 128 passes the undefined q1, k1: a NameError, so it reaches this entry only for
# d > 128, in 64-wide head slices): q and k as given, v zero-padded in its last dim to a power of 2; its autograd
# backward (dq, dk, dv) is what training uses. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "lightning_attn2_no_decay"
AUDIT_SHAPE = (2, 3, 80, 16)  # batch, heads, sequence length (two 64-token blocks), head dim (v's dim the same)


def make_inputs(case):
    b, h, n, d = case.shape
    e = 1 << max(d - 1, 0).bit_length()  # lightning_attn_func pads v's feature dim to a power of 2
    v = torch.nn.functional.pad(case.randn(b, h, n, d), (0, e - d))
    return (case.randn(b, h, n, d), case.randn(b, h, n, d), v)


def reference(q, k, v):
    n = q.shape[2]
    causal = torch.ones(n, n, dtype=torch.float64, device=q.device).tril()
    scores = (q.double() @ k.double().transpose(-1, -2)) * causal
    return (scores @ v.double()).to(q.dtype)
