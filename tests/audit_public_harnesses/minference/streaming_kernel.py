# Audit harness for tests/audit_public_corpus/minference/streaming_kernel.py: streaming_forward(q, k, v, n_init,
# n_local) -> o [b, h, n, d], StreamingLLM ("A-shape") attention: query i attends causally to the n_init first keys
# (attention sinks) and to the n_local keys ending at itself, softmax(q k^T / sqrt(d)) v over that set; two kernel
# stages (the sliding window, then the sinks outside it) merged by their running max and sum. A head_dim outside
# {16, 32, 64, 128, 256, 512} is zero-padded to the next power of 2 and the output cut back. Called as
# minference_forward.minference_prefill_kernel calls it for a head whose searched pattern is stream_llm: the head's
# slice `query_states[:, head, :, :].unsqueeze(1)` ([bsz, 1, q_len, head_dim], strided views; k, v the same length
# as q in prefill), fp16 or bf16, with the pattern's (vertical_size, slash_size) as (n_init, n_local). The one pattern
# file MInference ships with stream_llm heads is Phi-3-mini-128k-instruct's (43 heads, all (100, 800)), head_dim 96;
# the a_shape / tri_shape options call it the same way for any model. The file imports only torch and triton.
import math

import torch

ENTRY = "streaming_forward"
AUDIT_SHAPE = (1, 1, 832, 96)  # bsz, heads (the caller's slice), q_len (past n_local, so the sink stage runs), head_dim
TOLERANCES = {"float16": (1e-2, 1e-2)}  # P is rounded to fp16 before the P @ V dot, as in FlashAttention
N_INIT, N_LOCAL = 100, 800  # Phi-3-mini's stream_llm heads


def make_inputs(case):
    b, h, n, d = case.shape
    states = [case.randn(b, h + 1, n, d).to(torch.float16) for _ in range(3)]
    q, k, v = (s[:, 1:] for s in states)  # a head slice of the layer's states: strided, as the caller's
    return (q, k, v, N_INIT, N_LOCAL)


def reference(q, k, v, n_init, n_local):
    if q.dim() != 4 or not q.shape == k.shape == v.shape:
        raise ValueError("q, k, v must share a [bsz, heads, seq, head_dim] shape")
    n, d = q.shape[-2], q.shape[-1]
    i = torch.arange(n, device=q.device)[:, None]
    j = torch.arange(n, device=q.device)[None, :]
    allow = (j <= i) & ((i - j < n_local) | (j < n_init))
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(d)
    return (torch.softmax(s.masked_fill(~allow, float("-inf")), dim=-1) @ v.double()).to(q.dtype)
