# Audit harness for tests/audit_public_corpus/conch_triton_kernels/gelu_tanh_and_mul.py: gelu_tanh_and_mul_launcher(
# output, projections), in place: output [num_tokens, d] = gelu_tanh(gate) * up for projections [num_tokens, 2d] =
# [gate | up], the port of vLLM's gelu_tanh_and_mul (GeGLU, Gemma's MLP). Called as conch's
# ops.activation.gelu_tanh_and_mul calls it: output = torch.empty(x.shape[:-1] + (d,), dtype=x.dtype), x the output
# of the gate_up projection in the model dtype (fp16 here: the interpreter runs fp16 faithfully; Gemma checkpoints
# are bf16, served in bf16 or fp16), contiguous, d = 9216 (gemma-2-2b's intermediate_size). The reference is the math
# in float64 (conch's own PyTorch reference and vLLM round the activation to the input dtype before the product: 2
# ulps from this kernel's fp16 arithmetic at places, 1 from the exact result). The file imports only torch and triton
# (libdevice): no stand-in.
import torch

ENTRY = "gelu_tanh_and_mul_launcher"
AUDIT_SHAPE = (5, 9216)  # num_tokens, d (projections are [num_tokens, 2d])


def make_inputs(case):
    t, d = case.shape
    x = case.randn(t, 2 * d, dtype=torch.float16)
    return (torch.empty(t, d, dtype=torch.float16, device=case.device), x)


def reference(output, projections):
    d = projections.shape[-1] // 2
    if output.shape != projections.shape[:-1] + (d,):
        raise ValueError("output must be projections.shape[:-1] + (d,)")
    x = projections.double()
    output.copy_((torch.nn.functional.gelu(x[..., :d], approximate="tanh") * x[..., d:]).to(output.dtype))
