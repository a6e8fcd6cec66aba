# Audit harness for tests/audit_public_corpus/rotalabs_accel/activations.py (rotalabs-accel's
# rotalabs_accel/kernels/activations.py): swiglu_fused(gate, up) -> silu(gate) * up, elementwise over the flattened
# tensors (gate.view(-1)), computed in fp32 and stored in gate's dtype. Called as the package's SwiGLU module calls it
# (SwiGLU.forward: gate = w_gate(x), up = w_up(x), both [batch, seq, intermediate], contiguous Linear outputs, then
# w_down): an fp16 model's projections at Llama-7B's intermediate size 11008, 1 x 4 tokens. The reference is
# silu(gate) * up in float64, rounded to gate's dtype. Stand-in: swiglu_fused takes its Triton path only for CUDA
# tensors (`gate.is_cuda and up.is_cuda`): is_cuda is answered yes for the audited file's own frames only (as
# lion-pytorch's stand-in); every other caller gets torch's answer, or that of a stand-in installed before this one.
import sys

import torch

_FILE = "rotalabs_accel/activations.py"
_FLAG = "_p2t_rotalabs_activations"
_IS_CUDA = torch.Tensor.is_cuda
_TRAMPOLINES: dict = {}


def _as_caller(fget, self, filename):
    """An earlier harness's stand-in (a property that looks one frame up for its own file) asked from a frame that
    carries the real caller's file name, so that stand-ins chained in one process each still see their file."""
    t = _TRAMPOLINES.get(filename)
    if t is None:
        ns: dict = {}
        exec(compile("def _t(fget, self):\n    return fget(self)\n", filename, "exec"), ns)  # noqa: S102
        t = _TRAMPOLINES[filename] = ns["_t"]
    return t(fget, self)


def _is_cuda(self):
    filename = sys._getframe(1).f_code.co_filename
    if filename.endswith(_FILE):
        return True
    if isinstance(_IS_CUDA, property):  # another harness's stand-in, installed before this one
        return _as_caller(_IS_CUDA.fget, self, filename)
    return _IS_CUDA.__get__(self)


if not getattr(torch.Tensor, _FLAG, False):
    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "swiglu_fused"
AUDIT_SHAPE = (1, 4, 11008)  # batch, seq, intermediate (Llama-7B)
TOLERANCES = {"float16": (2e-3, 2e-3)}  # one fp16 rounding of the output


def make_inputs(case):
    b, s, n = case.shape
    gate = case.randn(b, s, n, dtype=torch.float16)
    up = case.randn(b, s, n, dtype=torch.float16)
    return (gate, up)


def reference(gate, up):
    if gate.shape != up.shape:
        raise ValueError("gate and up must share a shape")
    g = gate.double()
    return (torch.nn.functional.silu(g) * up.double()).to(gate.dtype)
