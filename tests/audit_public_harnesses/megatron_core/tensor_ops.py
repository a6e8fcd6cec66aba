# Audit harness for tests/audit_public_corpus/megatron_core/tensor_ops.py: tensor_merge(tensor_a, tensor_b,
# pos_on_device, output_tensor=None), in place on output_tensor (or tensor_a): with p = pos_on_device[0] (a device
# int32 scalar buffer, so that the launch reads it without a sync), output[:p] = tensor_a[:p] and output[p : p + n] =
# tensor_b[:n], n = min(len(tensor_b), len(output) - p); other rows untouched. Called as MambaMixer's dynamic-inference
# forward calls it for a batch that mixes decode and prefill requests: tensor_a the decode part y_decode [d, 1, D],
# tensor_b the prefill part y_prefill [T, 1, D] (the token count), pos_on_device mamba_metadata's
# device_decode_prefill = [decode requests, prefill requests] (int32), output_tensor a fresh torch.empty([T, 1, D]),
# all contiguous (the entry asserts it). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "tensor_merge"
AUDIT_SHAPE = (12, 5, 24)  # T tokens, d decode requests (d <= T), D the projection width


def make_inputs(case):
    t, d, w = case.shape
    d = min(d, t)
    pos = torch.tensor([d, max(t - d, 0)], dtype=torch.int32, device=case.device)
    return (case.randn(d, 1, w), case.randn(t, 1, w), pos, case.randn(t, 1, w))


def reference(tensor_a, tensor_b, pos_on_device, output_tensor=None):
    out = tensor_a if output_tensor is None else output_tensor
    p = int(pos_on_device[0])
    if not 0 <= p <= tensor_a.shape[0] or not tensor_a.shape[1:] == tensor_b.shape[1:] == out.shape[1:]:
        raise ValueError("0 <= pos <= len(tensor_a), rows of one shape")
    if output_tensor is not None:
        out[:p] = tensor_a[:p]
    n = max(min(tensor_b.shape[0], out.shape[0] - p), 0)
    out[p:p + n] = tensor_b[:n]
