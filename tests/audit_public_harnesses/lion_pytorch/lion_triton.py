# Audit harness for tests/audit_public_corpus/lion_pytorch/lion_triton.py (lion-pytorch's lion_pytorch/triton.py,
# saved under another name: the worker puts the file's folder on sys.path, where a triton.py would shadow triton):
# update_fn(p, grad, exp_avg, lr, wd, beta1, beta2), in place, one Lion step: p <- p * (1 - lr * wd) - lr *
# sign(beta1 * exp_avg + (1 - beta1) * grad), then exp_avg <- beta2 * exp_avg + (1 - beta2) * grad (the package's own
# PyTorch update_fn, lion_pytorch/lion_pytorch.py, is the reference below). Called as Lion(params, use_triton=True).step
# calls it for every parameter with a gradient: p the nn.Parameter, grad = p.grad (same shape, dtype and layout:
# autograd's gradient layout contract), exp_avg = state['exp_avg'] = zeros_like(p) at the first step, a running average
# later (random here, as at a later step); lr, wd = group['weight_decay'], betas as floats (Lion's defaults betas (0.9,
# 0.99); lr 1e-4 and weight decay 0.1, the README's "lr 3-10x smaller, weight decay 3-10x larger than AdamW"). The
# parameter is a Linear weight [out, in] in float32 (a small one: under the interpreter the autotuner's first config,
# BLOCK_SIZE 128, gives a program per 128 elements). Stand-in: update_fn asserts p.is_cuda for all three tensors, true
# for the GPU parameters of training and false for the CPU tensors of the interpreter: answered yes for the audited
# file's own frames only (as protenix's stand-in); every other caller gets torch's answer, or that of a stand-in
# installed before this one (asked from a frame carrying the caller's file name: chained stand-ins all hold).
import sys

import torch

_FILE = "lion_pytorch/lion_triton.py"
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


if not getattr(torch.Tensor, "_p2t_lion", False):
    torch.Tensor.is_cuda = property(_is_cuda)
    torch.Tensor._p2t_lion = True

ENTRY = "update_fn"
AUDIT_SHAPE = (96, 200)  # a Linear weight [out_features, in_features]: 19,200 elements, a ragged last block of 128


def make_inputs(case):
    o, i = case.shape
    p = case.randn(o, i, dtype=torch.float32)
    grad = case.randn(o, i, dtype=torch.float32)
    exp_avg = 0.5 * case.randn(o, i, dtype=torch.float32)
    return (p, grad, exp_avg, 1e-4, 0.1, 0.9, 0.99)


def reference(p, grad, exp_avg, lr, wd, beta1, beta2):  # lion_pytorch/lion_pytorch.py update_fn, verbatim
    if p.shape != grad.shape or p.shape != exp_avg.shape:
        raise ValueError("p, grad and exp_avg must share a shape")
    p.data.mul_(1. - lr * wd)
    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1. - beta1).sgn_()
    p.add_(update, alpha=-lr)
    exp_avg.mul_(beta2).add_(grad, alpha=1. - beta2)
