# Audit harness for tests/audit_public_corpus/bitsandbytes/kernels_8bit_quant.py: quantize_blockwise_triton(A, code,
# blocksize) as bitsandbytes/backends/triton/ops.py calls it (a 256-entry sorted code in [-1, 1], blocksize 64).
import torch

ENTRY = "quantize_blockwise_triton"
AUDIT_SHAPE = (4, 128)  # rows of two whole blocks: rows stay independent for the rows probe


def make_inputs(case):
    m, n = case.shape
    code = torch.linspace(-1.0, 1.0, 256, device=case.device, dtype=torch.float32)
    return (case.randn(m, n), code, 64)

# Its only caller, bitsandbytes/backends/triton/ops.py quantize_blockwise, passes A.contiguous(): layouts are the
# caller's job here (read in ops.py of the same wheel).
SKIP_PROBES = {"layout": "ops.quantize_blockwise, the only caller, passes A.contiguous()"}
