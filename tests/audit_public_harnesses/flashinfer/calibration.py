# Audit harness for tests/audit_public_corpus/flashinfer/calibration.py: collect_paired_token_rows(source,
# sample_slots, sample_values, sample_ready), in place: for each token row r of source [tokens, width] with
# sample_slots[r] >= 0, sample_values[sample_slots[r]] = source[r] and sample_ready[sample_slots[r]] = 1 (other rows
# of the ring buffers untouched). Called as the calibration integration calls it after collect_route_input on the
# same tokens: sample_slots the int32 [>= tokens] buffer that call filled (-1 for a token not sampled, else a distinct
# slot below the capacity), source a paired activation of those tokens, sample_values [capacity, width] and
# sample_ready [capacity] the caller-owned ring buffers. The package has no caller of its own (an exported API of
# the b12x MoE calibration sidecars). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "collect_paired_token_rows"
AUDIT_SHAPE = (6, 100, 8)  # tokens, width, ring capacity


def make_inputs(case):
    t, w, c = case.shape
    src = case.randn(t, w)
    take = case.rand(max(c, t), dtype=torch.float32).argsort()[:t].to(torch.int32)
    slots = torch.where(take < c, take, torch.full_like(take, -1))
    slots[::3] = -1  # tokens the sampler did not select
    return (src, slots.to(src.device), torch.zeros(c, w, dtype=src.dtype, device=src.device),
            torch.zeros(c, dtype=torch.int32, device=src.device))


def reference(source, sample_slots, sample_values, sample_ready):
    if source.ndim != 2 or sample_values.ndim != 2 or sample_values.shape[1] != source.shape[1]:
        raise ValueError("rank-2 source and sample_values of the same width")
    for r, s in enumerate(sample_slots[: source.shape[0]].tolist()):
        if s >= 0:
            sample_values[s] = source[r]
            sample_ready[s] = 1
