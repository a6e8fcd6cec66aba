# Audit harness for tests/audit_public_corpus/accelerated_scan/scalar.py: scan(forget, inputs) -> states [B, C, T],
# the first-order recurrence x[t] = forget[t] * x[t - 1] + inputs[t] along the last dimension (x[-1] = 0), chunked in
# blocks of 2048 with tl.associative_scan; an autograd Function (Scan: a reverse-scan backward kernel). Called as the
# package README's quick start calls it (accelerated_scan.scalar.scan): forget = 0.999 + 0.001 * rand (gates close to
# one: long memory) and inputs = rand, both [batch, dim, seqlen] float32 and contiguous (Scan.forward asserts it);
# the README's 1 x 512 x 131072 is cut to a few channels and 2.5 blocks (T = 5000; the docstring: "T can be any
# length") for the interpreter. The reference is the recurrence itself, run in float64 (the package's ref.scan, a
# tree, gives the same sums). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "scan"
AUDIT_SHAPE = (1, 4, 5000)  # batch, dim (channels), seqlen


def make_inputs(case):
    b, c, t = case.shape
    forget = 0.999 + 0.001 * case.rand(b, c, t, dtype=torch.float32)
    return (forget, case.rand(b, c, t, dtype=torch.float32))


def reference(forget, inputs):
    if forget.ndim != 3 or inputs.shape != forget.shape:
        raise ValueError("forget and inputs must be [B, C, T]")
    f, x = forget.double(), inputs.double()
    h = torch.zeros_like(x[..., 0])
    out = []
    for t in range(x.shape[-1]):
        h = f[..., t] * h + x[..., t]
        out.append(h)
    return torch.stack(out, dim=-1).to(inputs.dtype)
