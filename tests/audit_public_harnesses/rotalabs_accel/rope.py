# Audit harness for tests/audit_public_corpus/rotalabs_accel/rope.py (rotalabs-accel's rotalabs_accel/kernels/rope.py):
# apply_rope(q, k, cos, sin) -> (q_rot, k_rot): rotary position embeddings on interleaved pairs (the file's docstring
# and its PyTorch rope_torch: for each pair (2i, 2i + 1), x[2i] * cos - x[2i + 1] * sin and x[2i] * sin + x[2i + 1] *
# cos at angle position * base^(-2i / d)). Called as the package's RotaryEmbedding(dim, max_seq_len).forward(q, k)
# calls it without position_ids: q and k [batch, seq, heads, head_dim] (the module's documented layout; q_proj(x).view
# (B, S, H, D), contiguous) of an fp16 model, cos = cos_cache[:seq] and sin = sin_cache[:seq], float32 [seq, head_dim /
# 2] from build_rope_cache(max_seq_len, head_dim) (base 10000). Llama's head_dim 128, 4 heads, 16 tokens (the cache of
# 2048 positions cut to 64 here: the wrapper slices it to the sequence). The reference is rope_torch's formula in
# float64, rounded to q's dtype. Stand-in: apply_rope takes its Triton path only for a CUDA q (use_triton None ->
# `q.is_cuda`): is_cuda is answered yes for the audited file's own frames only (as lion-pytorch's stand-in); every
# other caller gets torch's answer, or that of a stand-in installed before this one.
import sys

import torch

_FILE = "rotalabs_accel/rope.py"
_FLAG = "_p2t_rotalabs_rope"
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

ENTRY = "apply_rope"
AUDIT_SHAPE = (1, 16, 4, 128)  # batch, seq, heads, head_dim (Llama's)
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 products, one fp16 rounding
CACHE = 64  # positions in the cos/sin cache (RotaryEmbedding's max_seq_len, cut for the example)


def _cache(seq, d, device):
    half = d // 2
    inv_freq = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float32) / half))
    angles = torch.outer(torch.arange(max(seq, CACHE), dtype=torch.float32), inv_freq)  # build_rope_cache
    return torch.cos(angles)[:seq].to(device), torch.sin(angles)[:seq].to(device)


def make_inputs(case):
    b, s, h, d = case.shape
    if d % 2:
        raise ValueError("build_rope_cache asserts an even head_dim")
    q = case.randn(b, s, h, d, dtype=torch.float16)
    k = case.randn(b, s, h, d, dtype=torch.float16)
    cos, sin = _cache(s, d, q.device)
    return (q, k, cos, sin)


def reference(q, k, cos, sin, use_triton=None):
    if q.dim() != 4 or cos.dim() != 2 or cos.shape[-1] * 2 != q.shape[-1]:
        raise ValueError("q, k [batch, seq, heads, head_dim]; cos, sin [seq, head_dim / 2]")
    s = q.shape[1]
    c, sn = cos[:s].double()[None, :, None, :], sin[:s].double()[None, :, None, :]

    def rot(x):
        x2 = x.double().reshape(*x.shape[:-1], -1, 2)
        return torch.stack([x2[..., 0] * c - x2[..., 1] * sn, x2[..., 0] * sn + x2[..., 1] * c], -1).flatten(-2)

    return rot(q).to(q.dtype), rot(k).to(k.dtype)
