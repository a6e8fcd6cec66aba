# Audit harness for tests/audit_public_corpus/hyper_connections/triton_sinkhorn.py: triton_sinkhorn(log_alpha,
# iters=20) -> alpha [..., s, s], Sinkhorn-Knopp in the log domain: iters rounds of a log-softmax over the columns
# (dim -2) then the rows (dim -1), exp of the result (a doubly stochastic matrix); an autograd Function
# (TritonSinkhornFunction: backward kernel). Called as hyper-connections' mHCv2 HyperConnections.width_connection calls
# it with use_triton_sinkhorn=True (residual_mix_constraint_fn = partial(triton_sinkhorn, iters=sinkhorn_iters), the
# default 20): log_alpha = alpha_residual, the residual-mixing logits static_alpha (eye(s) at init) + the dynamic
# term (scaled by residual_scale, 1e-2 at init), float32 (mHCv2 computes alpha in .float()), shape
# [proposals, batch, seq, s, s] with s = num_residual_streams (4 here, the paper's); it is the last-dim slice
# alpha[..., num_input_views * num_fracs:] of a [..., s, 1 + s] tensor, so not contiguous (triton_sinkhorn views it
# as [-1, s, s] and copies it). The reference is the package's PyTorch fallback (mHCv2.sinkhorn_knopps, the same
# iterations in the linear domain), copied below. Stand-in: triton_sinkhorn takes the Triton path only for
# log_alpha.is_cuda (its fallback imports hyper_connections.mHCv2, which needs einops): answered yes for the audited
# file's own frames only (as protenix's); every other caller gets torch's answer, or that of a stand-in installed
# before this one (asked from a frame carrying the caller's file name: chained stand-ins all hold).
import sys

import torch
import torch.nn.functional as F

_FILE = "hyper_connections/triton_sinkhorn.py"
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


if not getattr(torch.Tensor, "_p2t_hyper_connections", False):
    torch.Tensor.is_cuda = property(_is_cuda)
    torch.Tensor._p2t_hyper_connections = True

ENTRY = "triton_sinkhorn"
AUDIT_SHAPE = (1, 2, 32, 4)  # dynamic-alpha proposals, batch, sequence, residual streams


def make_inputs(case):
    p, b, n, s = case.shape
    static = torch.cat([torch.zeros(s, 1), torch.eye(s)], dim=1)  # static_alpha at init: [init_alpha0 | eye(s)]
    static[0, 0] = 1.0  # init_alpha0[init_residual_index] = 1 (layer 0)
    dynamic = 0.3 * case.randn(p, b, n, s, 1 + s, dtype=torch.float32)  # a trained model's dynamic term (1e-2 at init)
    logits = static.to(case.device) + dynamic
    return (logits[..., 1:], 20)  # alpha[..., 1:]: the pre-branch column is the first (num_input_views 1)


def reference(log_alpha, iters=20):  # hyper_connections/mHCv2.py sinkhorn_knopps, verbatim
    if iters <= 0:
        return log_alpha
    if log_alpha.shape[-2] != log_alpha.shape[-1]:
        raise ValueError("log_alpha must be [..., s, s]")
    dtype = log_alpha.dtype
    log_alpha = log_alpha.float()
    log_alpha = log_alpha - log_alpha.amax(dim=-2, keepdim=True).detach()
    alpha = log_alpha.exp()
    for _ in range(iters):
        alpha = F.normalize(alpha, p=1, dim=-2)
        alpha = F.normalize(alpha, p=1, dim=-1)
    return alpha.to(dtype)
