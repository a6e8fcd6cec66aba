# Audit harness for tests/audit_public_corpus/comfy_kitchen/na.py: na3d(q, k, v, kernel_size, is_causal=None,
# scale=None) -> out [B, T, H, W, heads, head_dim]: 3D neighborhood attention with NATTEN's na3d semantics (dilation
# 1): per non-causal axis each query attends the kernel_size positions centred on it, shifted inward at the borders
# (clamped to the axis length); per causal axis the min(i + 1, kernel_size) previous positions; softmax(q . k * scale)
# over that window (the Triton backend of comfy_kitchen.na3d; the eager backend, backends/eager/na.py, does the same
# math with a mask). Called as ComfyUI's LTX diffusion-VAE NeighborhoodAttention3D calls it in the decoder:
# q, k, v = (c.reshape(B, T, H, W, heads, head_dim) for c in qkv(x).chunk(3, dim=-1)) (views of the qkv projection,
# not contiguous), rotated in place by comfy_kitchen.rms_rope_ with the softmax scale folded into q's norm weight, then
# `comfy_kitchen.na3d(q, k, v, list(self.kernel_size), None, 1.0)`: non-causal, scale 1.0; fp16 here (the VAE runs in
# the model dtype; the CPU interpreter's fp16 tl.dot is exact, bf16's is not). The file imports only torch and triton.
import torch

ENTRY = "na3d"
AUDIT_SHAPE = (1, 3, 6, 10, 2, 64)  # batch, T, H, W, heads, head_dim
KERNEL = [3, 5, 5]
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 scores and accumulation, fp16 probabilities into the second dot


def make_inputs(case):
    b, t, h, w, nh, hd = case.shape
    qkv = case.randn(b, t, h, w, 3 * nh * hd, dtype=torch.float16)
    q, k, v = (c.reshape(b, t, h, w, nh, hd) for c in qkv.chunk(3, dim=-1))
    q = (q.float() * hd ** -0.5).to(torch.float16)  # the scale folded into q (rms_rope_'s weight), as the caller does
    return (q, k, v, list(KERNEL), None, 1.0)


def _window(size, k, causal):
    i = torch.arange(size)
    if causal:
        lo, hi = (i - k + 1).clamp(min=0), i + 1
    else:
        k = min(k, size)
        lo = (i - k // 2).clamp(min=0).clamp(max=size - k)
        hi = lo + k
    j = torch.arange(size)
    return (j[None, :] >= lo[:, None]) & (j[None, :] < hi[:, None])  # [query, key]


def reference(q, k, v, kernel_size, is_causal=None, scale=None):
    b, t, h, w, nh, hd = q.shape
    if k.shape != q.shape or v.shape != q.shape or len(kernel_size) != 3:
        raise ValueError("q, k, v must share a [B, T, H, W, heads, head_dim] shape; kernel_size has 3 entries")
    causal = [False] * 3 if is_causal is None else ([is_causal] * 3 if isinstance(is_causal, bool) else is_causal)
    scale = hd ** -0.5 if scale is None else scale
    mt, mh, mw = (_window(n, kk, c) for n, kk, c in zip((t, h, w), kernel_size, causal))
    mask = (mt[:, None, None, :, None, None] & mh[None, :, None, None, :, None]
            & mw[None, None, :, None, None, :]).reshape(t * h * w, t * h * w).to(q.device)
    qf, kf, vf = (x.double().reshape(b, t * h * w, nh, hd).transpose(1, 2) for x in (q, k, v))
    s = (qf @ kf.transpose(-1, -2)) * scale
    p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
    return (p @ vf).transpose(1, 2).reshape(q.shape).to(q.dtype)
