# Audit harness for tests/audit_public_corpus/olmo_core/swiglu.py: swiglu_valid_prefix(x, num_elements, *, start=None,
# out=None, ...) -> out [M, H]: out[r] = x[r, :H] * silu(x[r, H:]) for the valid rows start <= r < start +
# num_elements (num_elements, and start when a tensor, are device scalars, read by the kernel, never by the host);
# rows outside that range are left untouched by design. Called as RoutedExperts.chunk_and_activate calls it on the
# forward-only (no grad: inference, eval) SwiGLU experts path of olmo-core's MoE v2 (routed_experts.py):
# up_gate = the grouped up/gate projection [BS, 2H] (contiguous, the model's dtype: bf16) and num_elements =
# batch_size_per_expert_tensor.sum() (an int64 device scalar); in the dropless forward every row of up_gate is a
# routed row, so num_elements == BS. (The expert-parallel "row offset" and "rowwise wave" paths pass a capacity buffer
# with a device-scalar start and fewer valid rows, whose other rows are never read.) Stand-in: the kernel path is taken
# only when x.is_cuda (else the file's own PyTorch path runs): answered yes for the audited file's own frames only (as
# protenix's and flash_kmeans'); every other caller gets torch's answer. The file imports only torch and triton.
import sys

import torch
import torch.nn.functional as F

_FILE = "olmo_core/swiglu.py"
_FLAG = "_p2t_olmo_swiglu"

if not getattr(torch.Tensor, _FLAG, False):
    _PREV = torch.Tensor.is_cuda

    def _is_cuda(self):
        if sys._getframe(1).f_code.co_filename.endswith(_FILE):
            return True
        return _PREV.__get__(self)

    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "swiglu_valid_prefix"
AUDIT_SHAPE = (40, 96)  # routed rows BS, expert hidden size H (x is [BS, 2H])
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}  # fp32 math, one bf16 rounding of the output


def make_inputs(case):
    rows, hidden = case.shape
    x = case.randn(rows, 2 * hidden).to(torch.bfloat16)
    return (x, torch.tensor(rows, dtype=torch.int64, device=x.device))


def reference(x, num_elements, *, start=None, out=None, **_):
    if x.ndim != 2 or x.shape[1] % 2:
        raise ValueError("x must be [M, 2H]")
    n, s = int(num_elements), 0 if start is None else int(start)
    hidden = x.shape[1] // 2
    if s != 0 or n < x.shape[0]:
        raise ValueError("the reference defines only calls whose valid rows cover x (the rest is left untouched)")
    xf = x.float()
    return (xf[:, :hidden] * F.silu(xf[:, hidden:])).to(x.dtype)
