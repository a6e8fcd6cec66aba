# Audit harness for tests/audit_public_corpus/nvidia_modelopt/fp8_kernel.py: weight_dequant(x, s, block_size=128,
# dtype=torch.get_default_dtype()) -> y = x * s per block_size x block_size block (DeepSeek-V3's fp8 weight dequant):
# x [M, N] float8_e4m3fn, s [ceil(M / block_size), ceil(N / block_size)] float32 (the kernel indexes s with
# cdiv(N, block_size) columns; the docstring's M // block_size is the divisible case), both contiguous (asserted).
# The example uses block_size 32 to stay small. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "weight_dequant"
AUDIT_SHAPE = (40, 72)  # a (40, 72) fp8 weight, 32 x 32 blocks (both dims ragged)
BLOCK = 32


def make_inputs(case):
    m, n = case.shape
    x = case.randn(m, n).to(torch.float8_e4m3fn)
    s = 0.5 + case.rand((m + BLOCK - 1) // BLOCK, (n + BLOCK - 1) // BLOCK)
    return (x, s, BLOCK)


def reference(x, s, block_size=128, dtype=None):  # the entry's default is the default dtype at import
    dtype = torch.get_default_dtype() if dtype is None else dtype
    m, n = x.shape
    if s.shape != ((m + block_size - 1) // block_size, (n + block_size - 1) // block_size):
        raise ValueError("s must have one scale per block")
    ss = s.float().repeat_interleave(block_size, 0).repeat_interleave(block_size, 1)[:m, :n]
    return (x.float() * ss).to(dtype)
