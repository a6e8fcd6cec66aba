"""Issue 35, held_out_23 static label: minference/streaming_kernel.py:344 (masked_lanes_in_reduction), GPU only
(Triton 3.6: the file's tl.make_block_ptr is gone in 3.9). NOT the audit.

    python benchmarks/explore/held_out_23_24/streaming_score.py

_score_kernel sums each key's softmax probabilities over the query rows (the per-key score InfLLM's
TritonMultiStageDotProductionAttention.append(get_score=True) returns), but it zeroes the padded query rows (row >=
N_CTX) only `if not IS_EVEN_N` (the KEY length's evenness): with a key length that is a multiple of 64 and a query
length that is not, the zero-padded rows' probabilities (1 / key length each, from the zero q) join every column.
Prints, per (q_len, k_len), the largest difference between the kernel's score and the column sums of the exact
softmax over the real rows. The label (real) is confirmed if (100, 128) is off by about 28 / 128 = 0.22 and (100,
130) and (128, 128) agree (fp16: < 1e-2).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gpu_checks import load  # noqa: E402


def main() -> int:
    if not torch.cuda.is_available():
        print("streaming_score: needs a GPU (Triton 3.9 removed tl.make_block_ptr)")
        return 2
    sk = load("tests/audit_public_corpus/minference/streaming_kernel.py")
    torch.manual_seed(0)
    worst_bad = 0.0
    for q_len, k_len in ((100, 128), (100, 130), (128, 128)):
        q = torch.randn(1, 2, q_len, 64, device="cuda", dtype=torch.float16)
        k = torch.randn(1, 2, k_len, 64, device="cuda", dtype=torch.float16)
        v = torch.randn(1, 2, k_len, 64, device="cuda", dtype=torch.float16)
        attn = sk.TritonMultiStageDotProductionAttention(q.shape, q.dtype, q.device)
        attn.append(q, k, v, end=True, get_score=True)
        _, scores = attn.get_result()
        p = torch.softmax((q.double() @ k.double().transpose(-1, -2)) / 64 ** 0.5, dim=-1)
        err = (scores[0].double() - p.sum(dim=-2)).abs().max().item()
        print(f"q_len {q_len} k_len {k_len}: max |score - exact column sum| {err:.4f}")
        if (q_len, k_len) == (100, 128):
            worst_bad = err
    print(f"streaming_score: uneven q with even k off by {worst_bad:.3f} (label real if ~0.22)")
    return 1 if worst_bad > 0.05 else 0


if __name__ == "__main__":
    sys.exit(main())
