"""GOOD for its task: causal attention, one program per (batch, head), the whole sequence in one tile of
BS = next_power_of_2(S) rows. No early return on an empty sequence: S = 0 gives BS = 0, and tl.arange(0, 0) does not
compile. The task never gives S = 0, so that specialisation is robustness ("empty dims"), not a P0 (issue 45)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, D, scale, BS: tl.constexpr, BD: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * S * D
    rows = tl.arange(0, BS)
    cols = tl.arange(0, BD)
    m = (rows[:, None] < S) & (cols[None, :] < D)
    off = base + rows[:, None] * D + cols[None, :]
    q = tl.load(q_ptr + off, mask=m, other=0.0)
    k = tl.load(k_ptr + off, mask=m, other=0.0)
    v = tl.load(v_ptr + off, mask=m, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    keep = (rows[None, :] <= rows[:, None]) & (rows[None, :] < S)
    s = tl.where(keep, s, float("-inf"))
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p, v, input_precision="ieee")
    tl.store(o_ptr + off, o, mask=m)


def causal_attention(q, k, v):
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    *lead, S, D = q.shape
    out = torch.empty_like(q)
    bh = 1
    for n in lead:
        bh *= n
    if bh:  # an empty batch launches nothing; an empty sequence still launches, with BS = 0
        causal_attn_kernel[(bh,)](q, k, v, out, S, D, D ** -0.5, BS=triton.next_power_of_2(S),
                                  BD=max(16, triton.next_power_of_2(D)))
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return causal_attention(q, k, v)
