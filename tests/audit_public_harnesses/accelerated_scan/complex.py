# Audit harness for tests/audit_public_corpus/accelerated_scan/complex.py: scan(forget, inputs) -> states [B, C, T]
# complex, the first-order recurrence x[t] = forget[t] * x[t - 1] + inputs[t] over complex numbers (x[-1] = 0),
# packed as (real, imag) pairs through view_as_real and chunked in blocks of 2048 with tl.associative_scan; an
# autograd Function (Scan: backward g[t] = d_out[t] + conj(forget[t + 1]) g[t + 1], d_forget = g conj(x[t - 1])). Called
# as a diagonal complex linear RNN (an LRU-style layer) calls it: forget the per-channel complex eigenvalues
# lambda = exp(-exp(nu) + i theta) with |lambda| in [0.9, 0.999] and phases in [0, pi / 10), broadcast over time
# (contiguous: Scan.forward asserts it), inputs the complex projected tokens (complex64; a real tensor is also accepted,
# its imaginary part zero), [batch, dim, seqlen], cut to a few channels and 2.5 blocks for the interpreter (T = 5000:
# "T can be any length"). The reference is the recurrence itself, run in complex128. The file imports only torch and
# triton: no stand-in.
import math

import torch

ENTRY = "scan"
AUDIT_SHAPE = (1, 4, 5000)  # batch, dim (channels), seqlen


def make_inputs(case):
    b, c, t = case.shape
    mag = 0.9 + 0.099 * case.rand(b, c, 1, dtype=torch.float32)
    phase = (math.pi / 10) * case.rand(b, c, 1, dtype=torch.float32)
    forget = torch.polar(mag, phase).expand(b, c, t).contiguous()
    inputs = torch.complex(case.randn(b, c, t, dtype=torch.float32), case.randn(b, c, t, dtype=torch.float32))
    return (forget, inputs)


def reference(forget, inputs):
    if not torch.is_complex(forget):
        raise TypeError("forget must be a complex tensor")
    if forget.ndim != 3 or inputs.shape != forget.shape:
        raise ValueError("forget and inputs must be [B, C, T]")
    f, x = forget.to(torch.complex128), inputs.to(torch.complex128)
    h = torch.zeros_like(x[..., 0])
    out = []
    for t in range(x.shape[-1]):
        h = f[..., t] * h + x[..., t]
        out.append(h)
    dtype = torch.complex64 if inputs.dtype in (torch.float32, torch.complex64) else torch.complex128
    return torch.stack(out, dim=-1).to(dtype)
