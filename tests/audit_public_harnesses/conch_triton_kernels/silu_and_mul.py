# Audit harness for tests/audit_public_corpus/conch_triton_kernels/silu_and_mul.py: silu_and_mul_launcher(output, x),
# in place: output [num_tokens, d] = silu(gate) * up for x [num_tokens, 2d] = [gate | up] (SwiGLU), the port of vLLM's
# silu_and_mul (the activation computed in fp32 and cast to the input dtype, then multiplied, as vLLM does). Called
# as conch's ops.activation.silu_and_mul calls it: output = torch.empty(x.shape[:-1] + (d,), dtype=x.dtype), x the
# output of the gate_up projection in the model dtype (fp16 here), contiguous (the launcher asserts it), d = 11008
# (Llama-2-7B's intermediate_size). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "silu_and_mul_launcher"
AUDIT_SHAPE = (5, 11008)  # num_tokens, d (x is [num_tokens, 2d])


def make_inputs(case):
    t, d = case.shape
    x = case.randn(t, 2 * d, dtype=torch.float16)
    return (torch.empty(t, d, dtype=torch.float16, device=case.device), x)


def reference(output, x):
    d = x.shape[-1] // 2
    if output.shape != x.shape[:-1] + (d,):
        raise ValueError("output must be x.shape[:-1] + (d,)")
    act = torch.nn.functional.silu(x[..., :d].float()).to(x.dtype)  # vLLM: the activation in fp32, cast
    output.copy_((act.double() * x[..., d:].double()).to(output.dtype))
