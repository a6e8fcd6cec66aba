# Audit harness for tests/audit_public_corpus/protenix/fused_ops.py: dropout_add_rowwise(residual, x, p_drop, training)
# -> residual + dropout_rowwise(x) for x, residual [..., R, C, D]: one keep/drop draw per (batch, c, d), shared along
# dim -3 (R), kept values scaled by 1 / (1 - p_drop); in training the fused path is _DropoutAddRowwise.apply, whose
# backward regenerates the mask from the saved seed (grad residual = grad out, grad x = grad out * mask * scale).
# Called as protenix's PairformerBlock (pairformer.py) calls it in training: z the pair representation [N_token,
# N_token, c_z] plus each triangle update, p_drop its dropout (0.25), training=True; the MSA block does the same on m
# [n_msa, N_token, c_m]. Stand-ins: the Triton path is taken only when FUSED_DROPOUT_RESIDUAL=True (read at import;
# set here, as a user turns the fused path on) and x.is_cuda, true for the GPU tensors of training and false for the
# CPU tensors of the interpreter: answered yes for the audited file's own frames only (as flash_kmeans'
# stand-in); every other caller gets torch's answer. The seed, torch.randint(0, 2**31 - 1, (1,), device="cpu") per
# forward, is fixed in the audited file's frames only (SEED), so that runs of the probes use one dropout mask and the
# reference can draw it: the reference recomputes tl.rand(SEED, mask_idx) with its own Philox-4x32-10 in PyTorch.
import os
import sys

import torch

os.environ["FUSED_DROPOUT_RESIDUAL"] = "True"
SEED = 123457
_FILE = "protenix/fused_ops.py"
_IS_CUDA = torch.Tensor.is_cuda
_RANDINT = torch.randint


def _is_cuda(self):
    if sys._getframe(1).f_code.co_filename.endswith(_FILE):
        return True
    return _IS_CUDA.__get__(self)


def _randint(*args, **kwargs):
    if sys._getframe(1).f_code.co_filename.endswith(_FILE):
        return torch.tensor([SEED], dtype=torch.int64, device=kwargs.get("device", "cpu"))
    return _RANDINT(*args, **kwargs)


if not getattr(torch.Tensor, "_p2t_protenix", False):
    torch.Tensor.is_cuda = property(_is_cuda)
    torch.randint = _randint
    torch.Tensor._p2t_protenix = True

ENTRY = "dropout_add_rowwise"
AUDIT_SHAPE = (12, 12, 16)  # R (rows, the mask is shared along them), C, D (c_z)
M32 = 0xFFFFFFFF


def make_inputs(case):
    r, c, d = case.shape
    return (case.randn(r, c, d), case.randn(r, c, d), 0.25, True)


def _mul(a, b):  # (hi, lo) 32-bit halves of a * b, a a 32-bit constant, b int64 tensor of uint32 values
    b_hi, b_lo = b >> 16, b & 0xFFFF
    p_hi, p_lo = a * b_hi, a * b_lo
    return (p_hi + (p_lo >> 16)) >> 16, ((p_hi << 16) + p_lo) & M32


def _rand(seed, offset):  # triton.language.random.rand(seed, offset) for int32 offsets
    c0, c1 = offset & M32, torch.zeros_like(offset)
    c2, c3 = c1.clone(), c1.clone()
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(10):
        hi_b, lo_b = _mul(0xCD9E8D57, c2)
        hi_a, lo_a = _mul(0xD2511F53, c0)
        c0, c2, c1, c3 = hi_b ^ c1 ^ k0, hi_a ^ c3 ^ k1, lo_b, lo_a
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    x = torch.where(c0 >= 2**31, c0 - 2**32, c0)
    x = torch.where(x < 0, -x - 1, x)
    return x.to(torch.float32) * torch.tensor(4.6566127342e-10, dtype=torch.float32)


def reference(residual, x, p_drop, training):
    if not training or p_drop == 0.0:
        return residual + x
    if x.ndim < 3 or residual.shape != x.shape:
        raise ValueError("x and residual must share a shape [..., R, C, D]")
    cd, rcd = x.shape[-2] * x.shape[-1], x.shape[-3] * x.shape[-2] * x.shape[-1]
    i = torch.arange(x.numel(), dtype=torch.int64, device=x.device)
    keep = _rand(SEED, (i // max(rcd, 1)) * cd + i % max(cd, 1)) >= torch.tensor(p_drop, dtype=torch.float32)
    scale = 1.0 / (1.0 - torch.tensor(p_drop, dtype=torch.float32).double())
    mask = (keep.double() * scale).reshape(x.shape)
    return (residual.double() + x.double() * mask).to(x.dtype)
