# Audit harness for tests/audit_public_corpus/minference/flash_attn_triton.py: _flash_attn_triton_decoding(q, k, v,
# dropout_p=0.0, softmax_scale=None, causal=False) -> o [b, q_len, heads, d] = softmax(q k^T * scale) v per (batch,
# head), scale 1/sqrt(d) by default; q [b, q_len, heads, d], k, v [b, k_len, heads, d], fp16 or bf16, d <= 128. It is
# MInference's stand-in for flash_attn.flash_attn_func when flash-attn is not installed (`except ImportError: from
# ..ops.flash_attn_triton import _flash_attn_triton_decoding as flash_attn_func` in minference_forward.py,
# flexprefill.py, inf_llm.py; MInference's Requires-Dist has no flash-attn). Called as minference_forward's patched
# attention calls it when decoding (q_len == 1: every generated token, every layer): `flash_attn_func(
# query_states.transpose(1, 2), key_states.transpose(1, 2), value_states.transpose(1, 2), 0.0, softmax_scale=None,
# causal=q_len != 1)`, i.e. strided [bsz, 1, heads, d] / [bsz, kv_len, heads, d] views of the [bsz, heads, len, d]
# states (the kv heads already repeated to the query heads), causal False; the prefill's dense heads call it with
# q_len == kv_len and causal True. The reference follows flash_attn_func (causal aligned to the bottom right).
# Stand-in: the entry asserts q.is_cuda: answered yes for the audited file's own frames only (as protenix's).
import math
import sys

import torch

_FILE = "minference/flash_attn_triton.py"
_FLAG = "_p2t_minference_fa_triton"

if not getattr(torch.Tensor, _FLAG, False):
    _PREV = torch.Tensor.is_cuda

    def _is_cuda(self):
        if sys._getframe(1).f_code.co_filename.endswith(_FILE):
            return True
        return _PREV.__get__(self)

    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "_flash_attn_triton_decoding"
AUDIT_SHAPE = (1, 1, 300, 4, 128)  # bsz, q_len (1: a decode step), kv_len, heads, head_dim
TOLERANCES = {"float16": (1e-2, 1e-2)}  # P is rounded to fp16 before the P @ V dot, as in FlashAttention


def make_inputs(case):
    b, nq, nk, h, d = case.shape
    q = case.randn(b, h, nq, d).to(torch.float16).transpose(1, 2)  # query_states.transpose(1, 2): strided
    k = case.randn(b, h, nk, d).to(torch.float16).transpose(1, 2)
    v = case.randn(b, h, nk, d).to(torch.float16).transpose(1, 2)
    return (q, k, v, 0.0, None, nq != 1)


def reference(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
    if dropout_p:
        raise ValueError("the reference has no dropout")
    b, nq, h, d = q.shape
    nk = k.shape[1]
    if k.shape != (b, nk, h, d) or v.shape != k.shape or d > 128:
        raise ValueError("q [b, q_len, h, d], k and v [b, kv_len, h, d], d <= 128")
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else softmax_scale
    s = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double()) * scale
    if causal:  # flash_attn_func's alignment: query i sees keys j <= i + kv_len - q_len
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + nk - nq, float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, dim=-1), v.double()).to(q.dtype)
