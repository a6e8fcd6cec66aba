# Audit harness for tests/audit_public_corpus/verl/qat_linear.py: fp4_fake_quant_weight(weight, global_amax=None,
# block_size=16, tile_rows=16, tile_cols=64) -> weight fake-quantized to NVFP4 (the QATLinear weight path): the last
# dim in blocks of 16, global_scale = amax(|w|) / (6 * 448), each block's scale = min(blockmax / (6 * global_scale),
# 448) rounded to float8_e4m3fn and times global_scale (1.0 below 1e-5), |w| / scale rounded to the E2M1 grid {0, 0.5,
# 1, 1.5, 2, 3, 4, 6} (ties as the kernel's <= / <), times the scale, with w's sign; the shape and dtype of weight.
# The file imports only torch and triton: no stand-in.
import torch

ENTRY = "fp4_fake_quant_weight"
AUDIT_SHAPE = (20, 80)  # a (20, 80) weight: 5 blocks of 16 per row, tiles of 16 x 64 (both dims ragged)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def reference(weight, global_amax=None, block_size=16, tile_rows=16, tile_cols=64):
    x = weight.reshape(-1, weight.shape[-1]).float()
    m, n = x.shape
    pad = (block_size - n % block_size) % block_size
    xb = torch.nn.functional.pad(x, (0, pad)).reshape(m, -1, block_size)
    amax = weight.abs().max().float() if global_amax is None else global_amax.float()
    gs = amax / (6.0 * 448.0)
    gs_safe = torch.where(gs > 0, gs, torch.tensor(1e-12))
    bmax = xb.abs().amax(-1, keepdim=True) / (6.0 * gs_safe)
    bq = torch.minimum(bmax, torch.tensor(448.0)).to(torch.float8_e4m3fn).float() * gs
    bq = torch.where(bq >= 1e-5, bq, torch.ones_like(bq))
    a = xb.abs() / bq
    q = torch.where(a <= 0.25, 0.0, torch.where(a < 0.75, 0.5, torch.where(a <= 1.25, 1.0, torch.where(
        a < 1.75, 1.5, torch.where(a <= 2.5, 2.0, torch.where(a < 3.5, 3.0, torch.where(a <= 5.0, 4.0, 6.0)))))))
    y = q * bq
    y = torch.where(xb >= 0, y, -y).reshape(m, -1)[:, :n]
    return y.to(weight.dtype).view(weight.shape)
