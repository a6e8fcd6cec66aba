# Audit harness for tests/audit_public_corpus/cuda_triton_multiarch/swiglu.py: swiglu_triton(x, gate) -> x * silu(gate)
# elementwise over the flattened tensors (x.view(-1): contiguous inputs of one shape), the output of x's shape and
# dtype. Called as a Llama/Mistral MLP calls its activation (the file's docstring: "Used in Llama, Mistral, etc. as the
# FFN activation"): x = up_proj(h) and gate = gate_proj(h), [tokens, 11008] (Llama-7B's intermediate size), fp16 (the
# package's fp16 kernels; its benchmark compares with swiglu_native). Reference: the math in float64. The file imports
# only torch and triton: no stand-in.
import torch

ENTRY = "swiglu_triton"
AUDIT_SHAPE = (8, 11008)  # tokens, intermediate size
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 sigmoid, one fp16 rounding of the output


def make_inputs(case):
    rows, n = case.shape
    return (case.randn(rows, n, dtype=torch.float16), case.randn(rows, n, dtype=torch.float16))


def reference(x, gate):
    if x.shape != gate.shape:
        raise ValueError("x and gate of one shape")
    g = gate.double()
    return (x.double() * g * torch.sigmoid(g)).to(x.dtype)
