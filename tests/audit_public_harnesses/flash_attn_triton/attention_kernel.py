# Audit harness for tests/audit_public_corpus/flash_attn_triton/attention_kernel.py: attention(q, k, v, causal=False,
# sm_scale=None, dropout_p=0.0, dropout_seed=None) = _attention.apply -> o [b, h, n, d], softmax(q k^T * sm_scale) v
# per (batch, head), causal or not; q, k, v [b, h, n, d] with d in {16, 32, 64, 128, 256}. Called as the package's
# flash_attn_func calls it: q, k, v fp16 (or bf16), made contiguous in [b, h, n, d] after padding the sequence with
# zeros to a multiple of 128 (non-causal calls must already be a multiple of 128), `attention(q, k, v, causal,
# softmax_scale)` with no dropout and no seed; its autograd backward (dq, dk, dv) is what training uses. The file
# imports triton.tools.experimental_descriptor, which this Triton (3.9) no longer has and the file never uses: an empty
# stand-in module; it also imports pytest (installed here) for its tests.
import math
import sys
import types

import torch

sys.modules.setdefault("triton.tools.experimental_descriptor", types.ModuleType("triton.tools.experimental_descriptor"))

ENTRY = "attention"
AUDIT_SHAPE = (1, 2, 128, 16)  # batch, heads, sequence length (one 128-token block, the interface's padding), head dim
TOLERANCES = {"float16": (1e-2, 1e-2)}  # P is rounded to fp16 before the P @ V dot, as in FlashAttention


def make_inputs(case):
    b, h, n, d = case.shape
    q, k, v = (case.randn(b, h, n, d).to(torch.float16) for _ in range(3))
    return (q, k, v, True, 1.0 / math.sqrt(max(d, 1)))


def reference(q, k, v, causal=False, sm_scale=None, dropout_p=0.0, dropout_seed=None):
    if dropout_p:
        raise ValueError("the reference has no dropout")
    n, d = q.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(~torch.ones(n, k.shape[-2], dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)
