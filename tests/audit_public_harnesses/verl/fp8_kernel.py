# Audit harness for tests/audit_public_corpus/verl/fp8_kernel.py: scaled_fp8_blockwise(data_hp, weight_block_size)
# -> (fp8_data, descale): "cast tensor from high precision to FP8 with blockwise quantization" of a 2-D (M, N) tensor,
# one scale per [BLOCK_M, BLOCK_N] block (M and N padded to the block with zeros, the output cropped back): with the
# Triton path, scale = max(absmax, 1e-10) / 448 per block, fp8 = clamp(x * (1 / scale), -448, 448) in float8_e4m3fn,
# descale of shape (ceil(M / BLOCK_M), ceil(N / BLOCK_N)). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "scaled_fp8_blockwise"
AUDIT_SHAPE = (40, 72)  # a (40, 72) weight, 32 x 32 blocks (both dims padded)
BLOCK = [32, 32]


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n), list(BLOCK))


def reference(data_hp, weight_block_size):
    bm, bn = weight_block_size
    m, n = data_hp.shape
    pm, pn = (bm - m % bm) % bm, (bn - n % bn) % bn
    x = torch.nn.functional.pad(data_hp.float(), (0, pn, 0, pm))
    gm, gn = x.shape[0] // bm, x.shape[1] // bn
    blocks = x.reshape(gm, bm, gn, bn)
    s = blocks.abs().amax(dim=(1, 3)).clamp_min(1e-10) / 448.0
    inv = 1.0 / s
    y = (blocks * inv[:, None, :, None]).clamp(-448.0, 448.0).reshape(x.shape)[:m, :n]
    return y.to(torch.float8_e4m3fn), s
