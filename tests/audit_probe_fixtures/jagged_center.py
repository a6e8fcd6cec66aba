# label: good
# Each row minus its sequence's mean, for a jagged batch: values (total, D) with offsets (B + 1,), output (total, D). A prefix of the value rows with the
# offsets left whole points past the values: the rows probe must not run (held_out_15's false P0s, fbgemm's jagged ops).
import torch
import triton
import triton.language as tl


@triton.jit
def jagged_center_kernel(v_ptr, off_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    start = tl.load(off_ptr + b)
    end = tl.load(off_ptr + b + 1)
    cols = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for r in range(start, end):
        acc += tl.load(v_ptr + r * D + cols, mask=cols < D, other=0.0)
    mean = acc / tl.maximum(end - start, 1).to(tl.float32)
    for r in range(start, end):
        x = tl.load(v_ptr + r * D + cols, mask=cols < D, other=0.0)
        tl.store(out_ptr + r * D + cols, x - mean, mask=cols < D)


def jagged_center(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    values = values.contiguous()
    b, d = offsets.numel() - 1, values.shape[1]
    out = torch.empty(values.shape, device=values.device, dtype=torch.float32)
    if b > 0:
        jagged_center_kernel[(b,)](values, offsets, out, d, BLOCK_D=triton.next_power_of_2(d))
    return out
