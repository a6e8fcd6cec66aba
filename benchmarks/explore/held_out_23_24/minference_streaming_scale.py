"""held_out_23, minference streaming_forward: what the CPU can show of its two known problems (not the audit).

1. Triton 3.9 removed tl.make_block_ptr (NotImplementedError in triton.language, compiled code too): every call of
   streaming_forward crashes (run: the harness's example call). minference 0.1.6.0 requires "triton" unpinned.
2. A head_dim outside {16, ..., 512} is zero-padded to the next power of 2 (96 -> 128) BEFORE
   TritonMultiStageDotProductionAttention.append computes sm_scale = 1 / sqrt(q.shape[-1]) (corpus line 576): Phi-3-mini
   (head_dim 96, the one model whose shipped pattern file has stream_llm heads: 43, all (100, 800)) gets softmax at
   1/sqrt(128). The kernel cannot run here (1.); this re-enacts the padded call with the harness's reference at the
   scale the kernel uses, to size the error. benchmarks/gpu_parts/held_out_23_24.sh runs the kernel on Triton 3.6.
"""
import importlib.util
import math
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


h = load("tests/audit_public_harnesses/minference/streaming_kernel.py", "st_h")
t = load("tests/audit_public_corpus/minference/streaming_kernel.py", "st")
q, k, v, n_init, n_local = h.make_inputs(Case("example", h.AUDIT_SHAPE, torch.float32, "cpu", 0))
try:
    t.streaming_forward(q, k, v, n_init, n_local)
    print("1. streaming_forward ran")
except Exception as e:  # noqa: BLE001
    print(f"1. streaming_forward crashed: {type(e).__name__}: {str(e)[:120]}")
d = q.shape[-1]
right = h.reference(q, k, v, n_init, n_local).double()
padded = h.reference(q * math.sqrt(d / 128), k, v, n_init, n_local).double()  # softmax(q k^T / sqrt(128))
print(f"2. head_dim {d}: attention at 1/sqrt(128) vs 1/sqrt({d}): max abs diff {(padded - right).abs().max().item():.3g}"
      f", mean {(padded - right).abs().mean().item():.3g} (output max {right.abs().max().item():.3g}); "
      f"the harness's fp16 tolerance is 1e-2")
