"""held_out_24, fp-quant mxfp4.py (and nvfp4.py): what was read and run under the interpreter (not the audit).

1. n_elements (x.numel(), tokens x in_features for activations) is a tl.constexpr of both kernels: every distinct
   token count compiles the kernel again. Not measurable here (the interpreter compiles nothing); the GPU part
   benchmarks/gpu_parts/held_out_23_24.sh counts the compiled variants.
2. QuEST's std is sqrt(mean(v^2) - mean(v)^2) with no clamp: a group of 32 equal rotated values (a row that is a
   multiple of e_0, whose Hadamard image is constant) could give a tiny negative variance and a NaN scale. Run: no
   NaN at 1.0, 0.7, 3.3 and 0.1 (the variance came out >= 0); such a group's output is ~0 in the kernel and the
   reference alike (std 0, scale 1e-8: QuEST's own behaviour). Not a known problem.
3. abs_max on an all-zero group: scale 0, v / 0 = NaN, output 0 (right) but the clip mask says "clipped" (NaN < 6 is
   False), so the STE backward drops those gradients (run: 0 of 256 kept). A robustness note: abs_max is not the
   default method and all-zero groups of activations or weights are rare.
"""
import importlib.util
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))
import run_harness  # noqa: E402

run_harness.install_interpreter_compat()


def load(rel, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


t = load("tests/audit_public_corpus/fp_quant/mxfp4.py", "mx")
h = load("tests/audit_public_harnesses/fp_quant/mxfp4.py", "mx_h")
H = h._hadamard(32, torch.float16, "cpu")

# 2. constant rotated groups
for c in (1.0, 0.7, 3.3, 0.1):
    x = torch.zeros(4, 256, dtype=torch.float16)
    x[:, ::32] = c  # every 32-row is c * e_0: its Hadamard image is 32 equal values c / sqrt(32)
    o, m = t.mxfp4_forward_kernel_wrapper(x, H, True, h.GAUSSIAN_SCALE, True)
    r, rm = h.reference(x, H, True, h.GAUSSIAN_SCALE, True)
    print(f"quest, rows of {c} * e_0: NaN outputs {o.isnan().sum().item()} of {o.numel()}, "
          f"max err vs reference {(o.double() - r.double()).nan_to_num(1e9).abs().max().item():.3g}")

# 3. abs_max, a zero row
x = torch.randn(4, 256).half()
x[1] = 0
o, m = t.mxfp4_forward_kernel_wrapper(x, H, True, 3 / 4, False)
print(f"abs_max, zero row: outputs of the row all 0: {bool((o[1] == 0).all())}; clip mask True (kept) "
      f"{m[1].sum().item()} of 256 (the reference keeps all 256: |0| < 6)")
