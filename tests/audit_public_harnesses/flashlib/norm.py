# Audit harness for tests/audit_public_corpus/flashlib/norm.py (flashlib's flashlib/kernels/norm/triton/norm.py):
# flash_rmsnorm(x, weight, eps) -> x / sqrt(mean(x^2 over the last dim) + eps) * weight, several rows per program (the
# file's "multi-row-per-CTA" kernel for a small normalized dim), fp32 reduction, the output in x's dtype. Called as the
# file's docstring names its use, Sparse VideoGen's per-head QK-norm of a video diffusion transformer: q (or k) [batch,
# tokens, heads, head_dim] bf16 (the model dtype; the wrapper makes x contiguous and flattens the leading dims), the
# norm's weight [head_dim] bf16, eps 1e-6 (Wan's RMSNorm eps). 1 x 256 tokens x 4 heads, head_dim 128. The reference is
# the RMSNorm formula in float64, rounded to x's dtype. Stand-in: flash_rmsnorm raises for a non-CUDA x (`if not
# x.is_cuda`): is_cuda is answered yes for the audited file's own frames only (as lion-pytorch's stand-in); every
# other caller gets torch's answer, or that of a stand-in installed before this one.
import sys

import torch

_FILE = "flashlib/norm.py"
_FLAG = "_p2t_flashlib_norm"
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

ENTRY = "flash_rmsnorm"
AUDIT_SHAPE = (1, 256, 4, 128)  # batch, tokens, heads, head_dim
TOLERANCES = {"bfloat16": (1.6e-2, 1.6e-2)}  # one bf16 rounding of the output


def make_inputs(case):
    b, t, h, d = case.shape
    x = case.randn(b, t, h, d, dtype=torch.bfloat16)
    weight = (1.0 + 0.1 * case.randn(d, dtype=torch.float32)).to(torch.bfloat16)
    return (x, weight, 1e-6)


def reference(x, weight, eps=1e-6):
    if weight.shape[-1] != x.shape[-1]:
        raise ValueError("weight must be [D]")
    xd = x.double()
    return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * weight.double()).to(x.dtype)
