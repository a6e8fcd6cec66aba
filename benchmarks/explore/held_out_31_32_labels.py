"""The labeller's GPU checks for held_out_31/32 (audited at 454e567): the static atomic_order P1s labelled real by
reading, whose run-to-run difference the CPU interpreter cannot show (it runs programs in order). Each subcommand runs
one kernel five times on the same inputs at a caller's size and exits 1 if any repeat differs bitwise from the first
(the label holds), 0 if all agree on the GPU (the label would be a paper-only P1: relabel), 2 under the interpreter
when they agree there (expected: no evidence either way).

  python benchmarks/explore/held_out_31_32_labels.py colsum_causal_repeat  # kernel_causal.py:93 (fp16 output)
  python benchmarks/explore/held_out_31_32_labels.py grad_both_repeat      # distributed_clip_loss.py:125, 127
  python benchmarks/explore/held_out_31_32_labels.py qwen3_denom_repeat    # _common.py:307
  python benchmarks/explore/held_out_31_32_labels.py qwen3_grad_repeat     # _common.py:355, 362

Inputs come from the batches' harnesses (benchmarks/explore/held_out_31_32.py builds them, and sets up the
interpreter without CUDA).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import torch

_spec = importlib.util.spec_from_file_location("ho3132", Path(__file__).resolve().parent / "held_out_31_32.py")
assert _spec and _spec.loader
ho = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ho)
CUDA, DEV = ho.CUDA, ho.DEV


def _verdict(name: str, what: str, runs: list[tuple[torch.Tensor, ...]]) -> int:
    """Print how many of the repeats differ from the first; the exit code described in the module docstring."""
    first = runs[0]
    differ = [any(not torch.equal(a, b) for a, b in zip(r, first, strict=True)) for r in runs[1:]]
    vals = max(sum(int((a != b).sum()) for a, b in zip(r, first, strict=True)) for r in runs[1:])
    total = sum(t.numel() for t in first)
    print(f"{name}: {what}, {sum(differ)} of {len(differ)} repeats differ from the first (up to {vals} of {total} "
          f"values) ({'GPU' if CUDA else 'interpreter'})")
    if not CUDA:
        return 1 if any(differ) else 2
    return 1 if any(differ) else 0


def colsum_causal_repeat() -> int:
    """_flash_colsum_causal at the README's causal size (32 heads, 128 queries, 4096 keys; head_dim 64 here, the size
    the kernel handles right): 32 x 8 programs add fp32 column sums per key with tl.atomic_add, then the wrapper divides
    and casts to fp16. Does the fp16 output change from run to run (as kernel_noncausal's did in 3 of 4 repeats)?"""
    h, k = ho._pair("flash_colsum", "kernel_causal")
    shape = (32, 128, 4096, 64) if CUDA else (2, 32, 320, 64)
    args = h.make_inputs(ho._case(shape, torch.float16))
    runs = [(k._flash_colsum_causal(*args),) for _ in range(5)]
    return _verdict("colsum_causal_repeat", f"{shape}", runs)


def _features(n: int, d: int):
    h, _ = ho._pair("memeff", "distributed_clip_loss")
    x, y, _, _, inv_t = h.make_inputs(ho._case((n, d), torch.float16))
    return x, y, inv_t


def grad_both_repeat() -> int:
    """_ring_backward (clip_grad_both_kernel: the distributed ring's backward, and the single-GPU loss's above the FA
    cap) on one rank at batch 8192, d 512: dX and dY_partial are accumulated with float tl.atomic_add per block."""
    _, k = ho._pair("memeff", "distributed_clip_loss")
    n, d = (8192, 512) if CUDA else (256, 64)
    x, y, inv_t = _features(n, d)
    row, col = torch.zeros(n, device=DEV), torch.zeros(n, device=DEV)
    k._launch_denom(x, y, row, col, inv_t)
    orig = math.sqrt(n / 0.07)
    runs = [k._ring_backward(x, y, row, col, 0, n, inv_t, orig, n) for _ in range(5)]
    return _verdict("grad_both_repeat", f"batch {n}, d {d}", runs)


def qwen3_denom_repeat() -> int:
    """launch_qwen3_denom (the Qwen3 losses' denominators) at batch 16384, d 512: masked row sums with float atomics."""
    _, k = ho._pair("memeff", "distributed_clip_loss")
    c = sys.modules["memeff._common"]
    n, d = (16384, 512) if CUDA else (256, 64)
    q, dd, inv_t = _features(n, d)
    pos = (q.float() * dd.float()).sum(dim=1)
    runs = []
    for _ in range(5):
        row = torch.zeros(n, device=DEV)
        c.launch_qwen3_denom(q, dd, pos, row, inv_t, 0.1)
        runs.append((row,))
    return _verdict("qwen3_denom_repeat", f"batch {n}, d {d}", runs)


def qwen3_grad_repeat() -> int:
    """launch_qwen3_grad two-sided (the Qwen3 losses' backward above the FA cap and in the ring) at batch 8192, d 512:
    dA and dB accumulated with float tl.atomic_add per block."""
    _, k = ho._pair("memeff", "distributed_clip_loss")
    c = sys.modules["memeff._common"]
    n, d = (8192, 512) if CUDA else (256, 64)
    q, dd, inv_t = _features(n, d)
    pos = (q.float() * dd.float()).sum(dim=1)
    row = torch.zeros(n, device=DEV)
    c.launch_qwen3_denom(q, dd, pos, row, inv_t, 0.1)
    runs = []
    for _ in range(5):
        da, db = torch.zeros(n, d, device=DEV), torch.zeros(n, d, device=DEV)
        c.launch_qwen3_grad(q, dd, pos, row, da, db, inv_t, 0.1, 1.0 / n, two_sided=True)
        runs.append((da, db))
    return _verdict("qwen3_grad_repeat", f"batch {n}, d {d}", runs)


CMDS = {f.__name__: f for f in (colsum_causal_repeat, grad_both_repeat, qwen3_denom_repeat, qwen3_grad_repeat)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CMDS:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CMDS)}}}", file=sys.stderr)
        sys.exit(2)
    sys.exit(CMDS[sys.argv[1]]())
