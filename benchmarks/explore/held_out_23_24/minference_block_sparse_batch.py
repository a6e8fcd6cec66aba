"""held_out_23, minference block_sparse_attention: known problems, run under the interpreter (not the audit).

1. seqlens has ONE element (`torch.tensor([context_size])`) but the kernel loads `seqlens + off_hz // H`: for batch
   b >= 1 it reads past the tensor (an out-of-bounds read) and uses whatever is there as that batch's length.
2. Sparse selection check: with top_k below the number of causal blocks the entry agrees with the harness reference.
"""
import importlib.util
import os
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def load(rel, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


t = load("tests/audit_public_corpus/minference/block_sparse_flash_attention.py", "bsa")
h = load("tests/audit_public_harnesses/minference/block_sparse_flash_attention.py", "bsa_h")
torch.manual_seed(0)

# 2. sparse selection (top_k = 2 of 5 blocks) agrees with the reference
q, k, v = (torch.randn(1, 1, 300, 128).half() for _ in range(3))
err = (t.block_sparse_attention(q, k, v, 2).double() - h.reference(q, k, v, 2).double()).abs().max().item()
print(f"top_k=2, n=300, batch 1: max err vs reference {err:.3g}")

# 1. batch 2: each batch row alone is right; together, batch 1 reads seqlens[1], past the 1-element tensor
q, k, v = (torch.randn(2, 1, 200, 128).half() for _ in range(3))
both = t.block_sparse_attention(q, k, v, 100)
for b in range(2):
    alone = t.block_sparse_attention(q[b:b + 1], k[b:b + 1], v[b:b + 1], 100)
    ref = h.reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], 100)
    print(f"batch {b}: alone vs ref {(alone.double() - ref.double()).abs().max().item():.3g}; "
          f"in a batch of 2 vs ref {(both[b:b + 1].double() - ref.double()).abs().max().item():.3g}")
# where the stray length comes from: the bytes after seqlens in memory. Make them a known small value: a 2-element
# buffer whose second slot says 64 stands for the neighbour the OOB read finds on the GPU's allocator.
seq = torch.tensor([200, 64], dtype=torch.int32)[:1]
pad = 64 - (200 & 63)
qp, kp, vp = (torch.nn.functional.pad(x, [0, 0, 0, pad]) for x in (q, k, v))
idx = t._build_block_index(qp, kp, 100)
o = t._triton_block_sparse_attention(qp, kp, vp, seq, idx, 128 ** -0.5)[..., :200, :]
ref1 = h.reference(q[1:], k[1:], v[1:], 100)
rows_bad = ((o[1:].double() - ref1.double()).abs().amax(dim=(0, 1, 3)) > 1e-2).nonzero().flatten()
print(f"batch 1 with the stray length 64: rows wrong {rows_bad.numel()} of 200 (first {rows_bad[:1].tolist()}), "
      f"rows >= 64 left zero: {bool((o[1, :, 64:] == 0).all())}")
