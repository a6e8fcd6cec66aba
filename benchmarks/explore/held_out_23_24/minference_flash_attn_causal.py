"""held_out_23, minference _flash_attn_triton_decoding (the fallback for flash_attn_func): causal alignment (not the
audit). With causal=True the kernel masks key j for query i when j > i (line 127) and stops at (start_m + 1) * BLOCK_M
keys (line 99): top-left alignment. flash_attn_func, which it stands in for, aligns causal masks to the bottom right
(query i sees keys j <= i + kv_len - q_len) since flash-attn 2.1. Equal lengths (a single-turn prefill) and q_len 1
with causal=False (a decode step, as minference_forward passes it) agree; a causal prefill over a cached prefix
(1 < q_len < kv_len) does not.
"""
import importlib.util
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT / "server")]
import run_harness  # noqa: E402

from pytorch_to_triton.worker.validation.tasks import Case  # noqa: E402

run_harness.install_interpreter_compat()


def load(rel, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


h = load("tests/audit_public_harnesses/minference/flash_attn_triton.py", "fa_h")
t = load("tests/audit_public_corpus/minference/flash_attn_triton.py", "fa")
for shape in ((1, 1, 300, 4, 128), (1, 200, 200, 2, 128), (1, 64, 300, 2, 128)):
    args = h.make_inputs(Case("c", shape, torch.float32, "cpu", 0))
    out, ref = t._flash_attn_triton_decoding(*args), h.reference(*args)
    print(f"q_len {shape[1]}, kv_len {shape[2]}, causal {args[-1]}: max err vs flash_attn_func's semantics "
          f"{(out.double() - ref.double()).abs().max().item():.3g}")
