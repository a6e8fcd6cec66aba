# Audit harness for tests/audit_public_corpus/conch_triton_kernels/int8.py: static_scaled_int8_quant_launcher(
# output_tensor, input_tensor, scale), in place: output_tensor [num_tokens, hidden] int8 = the activations
# input_tensor [num_tokens, hidden] divided by the static per-tensor scale (float32 [1]), rounded and clamped to
# [-128, 127]: the port of vLLM's static_scaled_int8_quant (compressed-tensors W8A8, "Int8 CompressedTensors scaling
# kernels"; the kernel's own comment: "Apply scaling factor, round, clamp, and cast to int8"), whose CUDA kernel
# rounds to nearest even (float_to_int8_rn). Called as conch's ops.quantization.int8.scaled_int8_quant calls it:
# output = torch.zeros_like(input, dtype=torch.int8), the activations of a linear layer in the model dtype (fp16
# here; bf16 alike), contiguous [num_tokens, hidden] (a linear layer's input), hidden 4096 (Llama-7B),
# a calibrated scale (the activations' absmax / 127). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "static_scaled_int8_quant_launcher"
AUDIT_SHAPE = (6, 4096)  # num_tokens, hidden_size


def make_inputs(case):
    t, h = case.shape
    x = case.randn(t, h, dtype=torch.float16)
    scale = (x.float().abs().amax().clamp_min(1e-6) / 127.0).reshape(1)  # static scale from calibration
    return (torch.zeros_like(x, dtype=torch.int8), x, scale)


def reference(output_tensor, input_tensor, scale):
    # vLLM's semantics: round to nearest even, then clamp (the kernel multiplies by 1 / scale: so does this)
    q = torch.round(input_tensor.double() * (1.0 / scale.double())).clamp(-128, 127)
    output_tensor.copy_(q.to(torch.int8))
