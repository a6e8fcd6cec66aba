# Audit harness for tests/audit_public_corpus/cuda_triton_multiarch/softmax.py: softmax_triton(x) -> the row-wise
# softmax of a 2-D x [rows, N] (one program per row of x.shape[0]; the package's __init__: "row-wise
# numerically-stable softmax"), output of x's dtype. Called as its README's softmax benchmark and callers use it: a
# contiguous [rows, N] fp16 tensor, here 16 rows of 4096 scores (one head's attention rows over a 4096-token context).
# Reference: torch's softmax in float64. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "softmax_triton"
AUDIT_SHAPE = (16, 4096)  # rows, N
TOLERANCES = {"float16": (2e-3, 2e-5)}  # fp16 exp and sum of the row, fp16 output


def make_inputs(case):
    rows, n = case.shape
    return (case.randn(rows, n, dtype=torch.float16),)


def reference(x):
    if x.dim() != 2:
        raise ValueError("x [rows, N]")
    return torch.softmax(x.double(), dim=-1).to(x.dtype)
