# Audit harness for tests/audit_public_corpus/flashlib/gram_gemm.py (flashlib's flashlib/linalg/gram_gemm/triton/
# gram_gemm.py): gram_gemm(X) -> X @ X.T, float32 [N, N], for D >> N (the dual of cov_gemm): tiles of the upper
# triangle streamed over D, the lower half mirrored on the host. Called as flashlib's PCA calls it when features
# outnumber samples: X [samples, features] float32 (centred data, contiguous); 64 samples x 2,000 features. The dot runs
# at Triton's default precision, TF32 for float32 on an H100 (the docstring says so: "the inner tl.dot runs at Triton's
# default precision (TF32 on Hopper for fp32)"), so the tolerance is TF32's over a 2,000-term sum. The reference is
# X @ X.T in float64. Stand-in: gram_gemm asserts X.is_cuda: answered yes for the audited file's own frames only.
import sys

import torch

_FILE = "flashlib/gram_gemm.py"
_FLAG = "_p2t_flashlib_gram"
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

ENTRY = "gram_gemm"
AUDIT_SHAPE = (64, 2000)  # samples N, features D
TOLERANCES = {"float32": (5e-2, 2e-3)}  # TF32 products (10-bit mantissa) summed over D, documented


def make_inputs(case):
    n, d = case.shape
    x = case.randn(n, d, dtype=torch.float32)
    return (x - x.mean(0, keepdim=True),)


def reference(X, *, tol=None):
    if X.dim() != 2:
        raise ValueError("X must be [N, D]")
    xd = X.double()
    return (xd @ xd.T).float()
