# Audit harness for tests/audit_public_corpus/flashlib/scaler.py (flashlib's
# flashlib/primitives/standard_scaler/triton/scaler.py): flash_standard_scaler_fit_transform(X) -> (Y, (mean, std)),
# sklearn's StandardScaler: per-column mean and biased std (ddof 0, a zero std replaced by 1 in the transform) by the
# file's single-pass shifted kernel (float32 block sums, float64 atomic totals), then Y = (X - mean) / std. Called as
# flashlib's StandardScaler.fit_transform calls it on a float32 design matrix [samples, features] (contiguous; the
# docstring: "X: (N, D) cuda fp32"); 3,000 samples x 20 features, columns far from zero (mean 100, std 5: the case the
# shifted formulation is there for). The reference is the same statistics in float64 (torch.var unbiased=False), Y in
# float32. Stand-in: flash_standard_scaler_fit / _transform assert X.is_cuda: answered yes for the audited file's own
# frames only (as lion-pytorch's stand-in).
import sys

import torch

_FILE = "flashlib/scaler.py"
_FLAG = "_p2t_flashlib_scaler"
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

ENTRY = "flash_standard_scaler_fit_transform"
AUDIT_SHAPE = (3000, 20)  # samples, features
TOLERANCES = {"float32": (1e-5, 1e-5)}  # float32 statistics of float64-accumulated sums


def make_inputs(case):
    n, d = case.shape
    x = 100.0 + 5.0 * case.randn(n, d, dtype=torch.float32)
    return (x,)


def reference(X):
    if X.dim() != 2:
        raise ValueError("X must be [N, D]")
    xd = X.double()
    mean = xd.mean(0)
    std = xd.var(0, unbiased=False).sqrt()
    safe = torch.where(std == 0, torch.ones_like(std), std)
    return ((xd - mean) / safe).float(), (mean.float(), std.float())
