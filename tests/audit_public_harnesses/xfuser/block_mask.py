# Audit harness for tests/audit_public_corpus/xfuser/block_mask.py: get_pool_sim_triton_simmean(x, block_size,
# simthreshd1) -> (pool, sim_blocks) for x [B, H, N, D]: pool [B, H, nblock, D] in x's dtype, the mean of each block of
# block_size rows (the last block's mean over its own rows: N need not be a multiple of block_size), and sim_blocks
# [B, H, nblock] bool, True where the block's mean pairwise cosine similarity, sum(gram(x / |x|)) / rows^2, exceeds
# the head's threshold simthreshd1[h] (rows of zero norm count as zero vectors). Called as xfuser's SpargeAttention
# path calls it (attention_backend._build_sparge_block_mask -> sparge.compute_sparge_block_mask ->
# get_block_map_meansim(image_q, image_k, BLKQ=256, BLKK=...)): x the image part of q or k, [B, H, S, D] bf16 with
# head_dim 128 (a slice of the attention input; the wrapper makes it contiguous), block_size the AITER config's
# BLOCK_M 256, simthreshd1 hyperparameter_check(0.3, H, device), a float32 (H,) tensor (spargeattn_simthreshold's
# default 0.3). The image length is what the video gives (Wan 480p: 21 x 30 x 52 = 32,760 tokens, not a multiple of
# 256): the last block is ragged unless pad_block_divisible or a text part pads it. Inputs: a per-(batch, head)
# shared direction plus noise, strong on even heads (similar blocks, sim ~0.8) and absent on odd heads (sim ~1/rows),
# so that both answers occur and none sits near the threshold. The file's other entries (get_block_map_meansim, the
# causal and block-map fills) are not probed. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "get_pool_sim_triton_simmean"
AUDIT_SHAPE = (1, 2, 600, 128)  # batch, heads, image tokens (600 = 2 x 256 + 88: a ragged last block), head_dim
BLOCK = 256
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}  # fp32 sums, one bf16 rounding of the pooled mean


def make_inputs(case):
    b, h, n, d = case.shape
    strength = torch.tensor([1.0 if i % 2 == 0 else 0.0 for i in range(h)]).view(1, h, 1, 1)
    common = case.randn(b, h, 1, d, dtype=torch.float32).cpu() * strength
    x = (common + 0.5 * case.randn(b, h, n, d, dtype=torch.float32).cpu()).to(torch.bfloat16)
    thr = torch.full((h,), 0.3, dtype=torch.float32)
    return (x.to(case.device), BLOCK, thr.to(case.device))


def reference(x, block_size, simthreshd1):
    b, h, n, d = x.shape
    nb = (n + block_size - 1) // block_size
    xf = x.double()
    pool = torch.empty(b, h, nb, d, dtype=torch.float64, device=x.device)
    sim = torch.empty(b, h, nb, dtype=torch.bool, device=x.device)
    for j in range(nb):
        blk = xf[:, :, j * block_size:(j + 1) * block_size]
        rows = blk.shape[2]
        pool[:, :, j] = blk.sum(2) / rows
        norm = blk.norm(dim=-1, keepdim=True)
        unit = torch.where(norm > 0, blk / norm.clamp_min(1e-300), torch.zeros_like(blk))
        unit = unit.to(torch.float16).double()  # the kernel rounds the unit rows to fp16 before its dot
        s = unit.sum(2)
        sim[:, :, j] = (s * s).sum(-1) / (rows * rows) > simthreshd1.double().view(1, h)
    return pool.to(x.dtype), sim
