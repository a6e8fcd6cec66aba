# Audit harness for tests/audit_public_corpus/rotalabs_accel/normalization.py (rotalabs-accel's
# rotalabs_accel/kernels/normalization.py): rmsnorm(x, weight, eps) -> x * rsqrt(mean(x^2 over the last dim) + eps) *
# weight, one program per row of x.view(-1, hidden), fp32 accumulation, the output in x's dtype. Called as the package's
# TritonRMSNorm(hidden_size).forward(x) calls it (rotalabs_accel.modules / kernels.__init__ export it as the Llama /
# Mistral norm of an inference stack): the hidden states [batch, seq, hidden] of an fp16 model (contiguous: the
# residual stream), the module's weight Parameter [hidden] after model.half() (fp16, near one), eps 1e-6 (the module's
# default). Llama-7B's hidden size 4096, 2 x 5 tokens. The reference is the RMSNorm formula in float64, rounded to x's
# dtype. Stand-in: rmsnorm takes its Triton path only for CUDA tensors (`x.is_cuda and weight.is_cuda`; otherwise the
# PyTorch fallback): is_cuda is answered yes for the audited file's own frames only (as lion-pytorch's and protenix's
# stand-ins); every other caller gets torch's answer, or that of a stand-in installed before this one.
import sys

import torch

_FILE = "rotalabs_accel/normalization.py"
_FLAG = "_p2t_rotalabs_normalization"
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

ENTRY = "rmsnorm"
AUDIT_SHAPE = (2, 5, 4096)  # batch, seq, hidden (Llama-7B)
TOLERANCES = {"float16": (2e-3, 2e-3)}  # one fp16 rounding of the output


def make_inputs(case):
    b, s, n = case.shape
    x = case.randn(b, s, n, dtype=torch.float16)
    weight = (1.0 + 0.1 * case.randn(n, dtype=torch.float32)).to(torch.float16)
    return (x, weight, 1e-6)


def reference(x, weight, eps=1e-6):
    if weight.shape != (x.shape[-1],):
        raise ValueError("weight must be [hidden]")
    xd = x.double()
    return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * weight.double()).to(x.dtype)
