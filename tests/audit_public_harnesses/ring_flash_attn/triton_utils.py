# Audit harness for tests/audit_public_corpus/ring_flash_attn/triton_utils.py: flatten_varlen_lse(lse, cu_seqlens) ->
# (nheads, total_seqlen), as its docstring gives it: lse [batch, nheads, max_seqlen] (flash-attn's padded varlen lse),
# cu_seqlens [batch + 1] int32 prefix sums of the sequence lengths (each <= max_seqlen); sequence b's first len_b
# positions, concatenated along the last dim. The entry enters torch.cuda.device(lse.device.index), a no-op under
# the interpreter (the worker). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "flatten_varlen_lse"
AUDIT_SHAPE = (3, 4, 37)  # 3 sequences, 4 heads, max_seqlen 37


def make_inputs(case):
    b, h, n = case.shape
    lens = case.randint(1, n + 1, (b,), dtype=torch.int32)
    cu = torch.cat([torch.zeros(1, dtype=torch.int32, device=lens.device), lens.cumsum(0).to(torch.int32)])
    return (case.randn(b, h, n), cu)


def reference(lse, cu_seqlens):
    cu = cu_seqlens.tolist()
    if len(cu) != lse.shape[0] + 1 or any(e - s > lse.shape[2] or e < s for s, e in zip(cu, cu[1:])):
        raise ValueError("cu_seqlens must hold batch + 1 prefix sums of lengths <= max_seqlen")
    return torch.cat([lse[b, :, : e - s] for b, (s, e) in enumerate(zip(cu, cu[1:]))] or [lse[:0, :, 0].T], dim=1)
