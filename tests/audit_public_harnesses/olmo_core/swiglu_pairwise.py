# Audit harness for tests/audit_public_corpus/olmo_core/swiglu_pairwise.py: swiglu_backward_pair(x, dy, *, block=1024,
# warps=4) -> dx [M, 2H], the backward of y = up * silu(gate) for x = [up | gate] [M, 2H]: dx[:, :H] = dy * silu(gate),
# dx[:, H:] = dy * up * sigmoid(gate) * (1 + gate * (1 - sigmoid(gate))), computed in fp32 and stored in x's dtype.
# Called as _PairwiseSwiGLU.backward calls it (pairwise_swiglu, the opt-in compiled-training path of olmo-core's MoE
# v2 experts, RoutedExperts.chunk_and_activate with _profile_pairwise_swiglu): x the saved up/gate projection [routed
# rows, 2H] (contiguous CUDA bf16, as chunk_and_activate checks before it takes this path) and dy = grad.contiguous()
# [routed rows, H] bf16. Stand-in: the entry refuses tensors that are not x.is_cuda: answered yes for the audited
# file's own frames only (as protenix's and flash_kmeans'); every other caller gets torch's answer. The file checks
# torch's version (2.11 or 2.13: the GPU's 2.11 and this machine's 2.13 both pass) and imports libdevice from
# triton.language.extra.cuda (its exp), which the worker's interpreter supplies.
import sys

import torch

_FILE = "olmo_core/swiglu_pairwise.py"
_FLAG = "_p2t_olmo_swiglu_pairwise"

if not getattr(torch.Tensor, _FLAG, False):
    _PREV = torch.Tensor.is_cuda

    def _is_cuda(self):
        if sys._getframe(1).f_code.co_filename.endswith(_FILE):
            return True
        return _PREV.__get__(self)

    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "swiglu_backward_pair"
AUDIT_SHAPE = (40, 96)  # routed rows M, expert hidden size H (x is [M, 2H])
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}  # fp32 math, one bf16 rounding of each gradient


def make_inputs(case):
    rows, hidden = case.shape
    x = case.randn(rows, 2 * hidden).to(torch.bfloat16)
    return (x, case.randn(rows, hidden).to(torch.bfloat16))


def reference(x, dy, *, block=1024, warps=4):
    if x.ndim != 2 or x.shape[1] % 2 or tuple(dy.shape) != (x.shape[0], x.shape[1] // 2):
        raise ValueError("x must be [M, 2H] and dy [M, H]")
    hidden = x.shape[1] // 2
    up, gate, g = x[:, :hidden].double(), x[:, hidden:].double(), dy.double()
    sig = torch.sigmoid(gate)
    return torch.cat((g * gate * sig, g * up * sig * (1 + gate * (1 - sig))), dim=1).to(x.dtype)
