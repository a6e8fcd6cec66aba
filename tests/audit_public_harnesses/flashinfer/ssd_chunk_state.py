# Audit harness for tests/audit_public_corpus/flashinfer/ssd_chunk_state.py: chunk_cumsum_fwd(dt, A, chunk_size,
# dt_bias, dt_softplus, dt_limit, dt_out_dtype) -> (dA_cumsum, dt_out), both [batch, nheads, nchunks, chunk_size]:
# dt_out = clamp(softplus(dt + dt_bias), *dt_limit) per (token, head), split into chunks of chunk_size tokens (0 past
# seqlen, in dt_out_dtype), dA_cumsum the float32 running sum of dt_out * A[head] within each chunk. Called as
# flashinfer/mamba/ssd_combined.py calls it (the first step of the Mamba2 SSD forward): dt [batch, seqlen, nheads],
# A [nheads] float32 (negative), dt_bias [nheads], dt_softplus=True, dt_limit (0, inf) by default, dt_out_dtype the
# io dtype (dt's here); chunk 16 (the model's 128 or 256 would be slow under the interpreter). The entry enters
# torch.cuda.device(dt.device.index), a no-op for a CPU tensor (index None). The file imports only torch, triton and
# packaging: no stand-in.
import torch

ENTRY = "chunk_cumsum_fwd"
AUDIT_SHAPE = (2, 40, 6)  # batch, seqlen (3 chunks of 16, the last partial), nheads
CHUNK = 16
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}


def make_inputs(case):
    b, s, h = case.shape
    dt = case.randn(b, s, h)
    a = -torch.exp(case.rand(h, dtype=torch.float32) * 2)
    bias = case.randn(h, dtype=torch.float32) * 0.5
    return (dt, a, CHUNK, bias, True, (0.0, float("inf")), dt.dtype)


def reference(dt, A, chunk_size, dt_bias=None, dt_softplus=False, dt_limit=(0.0, float("inf")),
              dt_out_dtype=torch.float32):
    b, s, h = dt.shape
    if A.shape != (h,) or (dt_bias is not None and dt_bias.shape != (h,)):
        raise ValueError("A and dt_bias must be [nheads]")
    x = dt.double() + (dt_bias.double() if dt_bias is not None else 0)
    if dt_softplus:
        x = torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)
    x = x.clamp(dt_limit[0], dt_limit[1])
    n = -(-s // chunk_size)
    pad = x.new_zeros(b, n * chunk_size, h)
    pad[:, :s] = x
    dt_out = pad.reshape(b, n, chunk_size, h).permute(0, 3, 1, 2)  # [b, h, nchunks, chunk]
    da = torch.cumsum(dt_out * A.double()[None, :, None, None], dim=-1)
    return da.float(), dt_out.to(dt_out_dtype)
