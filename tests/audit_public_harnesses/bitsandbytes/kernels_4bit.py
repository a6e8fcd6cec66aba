# Audit harness for tests/audit_public_corpus/bitsandbytes/kernels_4bit.py: quantize_4bit_blockwise_triton as
# bitsandbytes/backends/triton/ops.py quantize_4bit calls it (nf4, blocksize 64, outputs allocated by the caller).
import torch

ENTRY = "quantize_4bit_blockwise_triton"
AUDIT_SHAPE = (4, 128)
# The caller allocates absmax and the packed output for the flattened tensor: rows of the packed output are not rows
# of A, and a prefix of A's rows would need other buffers, so the rows probe does not apply.
SKIP_PROBES = {"rows": "the outputs are flat buffers the caller allocates, not rows of A"}


def make_inputs(case):
    m, n = case.shape
    numel = m * n
    blocks = -(numel // -(64 * 2))
    absmax = torch.empty((blocks * 2,), device=case.device, dtype=case.dtype)
    out = torch.empty((numel - numel // 2, 1), device=case.device, dtype=torch.uint8)
    return (case.randn(m, n), 64, "nf4", blocks, absmax, numel, out)
