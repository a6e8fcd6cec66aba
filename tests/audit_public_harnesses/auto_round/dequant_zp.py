# Audit harness for tests/audit_public_corpus/auto_round/dequant_zp.py (triton_utils_zp/dequant.py): dequant248_core(qweight, scales,
# qzeros, g_idx, bits, maxq=None, input_dtype=torch.float16) -> W (infeatures, outfeatures): the GPTQ layout the
# file's QuantLinear uses, bits 4: qweight int32 (infeatures / 8, outfeatures) packs 8 rows per word (row r at bit
# 4 * (r % 8)), qzeros int32 (groups, outfeatures / 8) packs 8 columns per word, scales (groups, outfeatures),
# g_idx int32 (infeatures) the group of each row; W[r, c] = scales[g, c] * (q[r, c] - (z[g, c] + 1)), g = g_idx[r].
# The public wrapper dequant248 refuses CPU tensors (ValueError for a device that is not cuda/xpu) and then calls
# this core, the function that launches the kernel. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "dequant248_core"
AUDIT_SHAPE = (64, 24)  # infeatures 64 (2 groups of 32), outfeatures 24
GROUP, BITS = 32, 4


def _pack(vals, dim):
    # vals int (.., k * 8 ..) in [0, 16): 8 consecutive entries along dim into one int32
    v = vals.long().movedim(dim, -1)
    v = v.reshape(*v.shape[:-1], -1, 8)
    word = sum(v[..., i] << (BITS * i) for i in range(8))
    word = torch.where(word >= 2**31, word - 2**32, word)
    return word.to(torch.int32).movedim(-1, dim)


def make_inputs(case):
    k, n = case.shape
    g = torch.Generator().manual_seed(case.seed)
    groups = -(-k // GROUP)
    rows = -(-k // 8) * 8
    q = torch.randint(0, 16, (rows, n), generator=g)
    z = torch.randint(0, 15, (groups, -(-n // 8) * 8), generator=g)
    dev = case.device
    return (_pack(q, 0).to(dev), case.rand(groups, n, low=0.01, high=0.1).half(), _pack(z, 1).to(dev),
            (torch.arange(k) // GROUP).to(dev, torch.int32), BITS)


def reference(qweight, scales, qzeros, g_idx, bits, maxq=None, input_dtype=torch.float16):
    k, n = g_idx.shape[0], scales.shape[1]
    if k % 8 or n % 8:
        raise ValueError("GPTQ packing: infeatures and outfeatures are multiples of 32 // bits")
    r = torch.arange(k)[:, None]
    c = torch.arange(n)[None, :]
    g = g_idx.long()[:, None]
    q = (qweight.long()[r // 8, c] >> (bits * (r % 8))) & 15
    z = (qzeros.long()[g, c // 8] >> (bits * (c % 8))) & 15
    return (scales.float()[g, c] * (q - (z + 1)).float()).to(input_dtype)
