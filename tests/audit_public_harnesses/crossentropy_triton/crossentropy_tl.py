# Audit harness for tests/audit_public_corpus/crossentropy_triton/crossentropy_tl.py (crossentropy-triton's
# crossentropy_triton/crossentropy_tl.py, adapted from Unsloth's cross-entropy kernel):
# cross_entropy_forward(logits [rows, V], labels [rows], ignore_index) -> (loss, logits_with_grads): one program per row
# computes the row's logsumexp online over V in blocks of min(32768, next_power_of_2(V)), stores (lse - x[y]) /
# n_non_ignore into a per-row loss and overwrites the row of logits with d loss / d logits = (softmax - onehot(y)) /
# n_non_ignore (0 for ignored rows); the loss is the sum of the rows. The in-place gradient is the function's contract:
# it returns logits as logits_with_grads, which CrossEntropyFunction saves for its backward (as Liger's and Unsloth's
# kernels do). Called as the package's CrossEntropyFunction.forward calls it (TritonCausalLMLoss(vocab_size)(logits,
# labels), the README's usage): the causal shift logits[..., :-1, :].contiguous() viewed as [batch * (seq - 1), V],
# labels[..., 1:] flattened (int64), ignore_index -100. The README's example: logits [2, 10, 32000] float32 (Llama's
# vocabulary), labels randint(0, 32000); here 2 x 9 shifted rows of a bf16 model's logits (a training run's dtype),
# with two labels -100 (masked prompt tokens). The reference: the mean cross-entropy over the non-ignored rows and its
# gradient, in float64. Stand-in: cross_entropy_forward raises for non-CUDA logits (`if not logits.is_cuda`): is_cuda
# is answered yes for the audited file's own frames only (as lion-pytorch's and protenix's stand-ins); every other
# caller gets torch's answer, or that of a stand-in installed before this one.
import sys

import torch

_FILE = "crossentropy_triton/crossentropy_tl.py"
_FLAG = "_p2t_crossentropy_triton_tl"
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

ENTRY = "cross_entropy_forward"
AUDIT_SHAPE = (2, 10, 32000)  # batch, seq, vocabulary (the README's example)
TOLERANCES = {"bfloat16": (2e-2, 1.6e-2)}  # the per-row loss and the gradient are stored in bf16


def make_inputs(case):
    b, s, v = case.shape
    logits = case.randn(b, s, v, dtype=torch.bfloat16)
    labels = case.randint(0, v, (b, s), dtype=torch.int64)
    labels[0, 1:3] = -100  # masked prompt tokens (SFT), as the data collator gives them
    # CrossEntropyFunction.forward: the causal shift, made contiguous, viewed as rows
    flat_logits = logits[..., :-1, :].contiguous().view(-1, v)
    flat_labels = labels[..., 1:].contiguous().view(-1)
    return (flat_logits, flat_labels, -100)


def reference(logits, labels, ignore_index=-100):
    x = logits.double()
    keep = labels != ignore_index
    n = int(keep.sum())
    if n == 0:
        return torch.zeros((), dtype=logits.dtype), torch.zeros_like(logits)
    safe = torch.where(keep, labels, 0)
    lse = torch.logsumexp(x, dim=-1)
    rows = (lse - x.gather(1, safe[:, None])[:, 0]) * keep
    grad = torch.softmax(x, dim=-1)
    grad[torch.arange(len(labels)), safe] -= 1.0
    grad = grad * keep[:, None] / n
    return (rows.sum() / n).to(logits.dtype), grad.to(logits.dtype)
