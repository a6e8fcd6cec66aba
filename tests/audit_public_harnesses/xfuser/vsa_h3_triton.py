# Audit harness for tests/audit_public_corpus/xfuser/vsa_h3_triton.py: triton_pool_h3_vsa_tiles(tensor, metadata) ->
# pooled [B, H, tiles, D] float32, the mean of each VSA-H3 tile's tokens of a packed [B, H, S, D] tensor: tile t holds
# the packed rows metadata.tiled_to_packed_row[t * 64:(t + 1) * 64] that are < S (padded slots point at S), and is
# divided by metadata.variable_block_sizes[t] (its token count). Called as xfuser's h3_vsa_attention calls it with
# use_triton=True (attention_backend's VSA-H3 backend for MiniMax-H3 / FastH3 video generation): tensor is query, key
# or value as the attention backend gets them, query.transpose(1, 2) of the projections [B, S, H, D] cut to
# metadata.total_seq_length ([B, H, S, D] views, strides (S*H*D, D, H*D, 1): the last dim contiguous, the rest not),
# bf16, head_dim 128 (56 heads in the 14B model; 2 here); metadata from build_h3_vsa_metadata((text_count,
# audio_count), video_shape, device): segment-pure 1-D prefix tiles of 64 tokens for the text and the audio, then
# 4 x 4 x 4 video tiles of the generated latent grid, full tiles first (the partial edge tiles last). The geometry
# below is xfuser 0.7.0's build_h3_vsa_metadata (core/vsa_h3_attention.py, Apache-2.0), cut to the fields the pool
# kernel reads; vsa_h3_attention.py imports flex_attention and xfuser's logger, so it is not imported. The file's
# other entry, triton_h3_vsa_attention (autotuned, its kv lists from build_h3_vsa_kv_list), is not probed. The file
# imports only torch and triton: no stand-in.
import math
from types import SimpleNamespace

import torch

ENTRY = "triton_pool_h3_vsa_tiles"
AUDIT_SHAPE = (1, 2, 5, 6, 8, 128)  # batch, heads, latent frames, height, width, head_dim
PREFIX = (77, 30)  # text and audio token counts: 64 + 13 and 30 (partial prefix tiles)
TILE_SHAPE = (4, 4, 4)
TILE = 64


def _axis_tile_sizes(length, tile):
    count = math.ceil(length / tile)
    sizes = torch.full((count,), tile, dtype=torch.long)
    sizes[-1] = length - (count - 1) * tile
    return sizes


def _video_tiles(video_shape):
    t, h, w = video_shape
    st, sh, sw = (_axis_tile_sizes(n, k) for n, k in zip(video_shape, TILE_SHAPE))
    sizes = (st[:, None, None] * sh[None, :, None] * sw[None, None, :]).reshape(-1)
    idx = torch.arange(t * h * w).reshape(t, h, w)
    tiles = [idx[a:a + 4, b:b + 4, c:c + 4].flatten()
             for a in range(0, t, 4) for b in range(0, h, 4) for c in range(0, w, 4)]
    return sizes, tiles


def build_metadata(prefix_segments, video_shape, device):
    """build_h3_vsa_metadata's tile map: variable_block_sizes, tiled_to_packed_row (int32, one extra padding tile)."""
    segments = tuple(int(s) for s in prefix_segments if s)
    prefix_sizes = []
    for seg in segments:
        full, rem = divmod(seg, TILE)
        prefix_sizes.extend([TILE] * full + ([rem] if rem else []))
    video_sizes, video_slices = _video_tiles(video_shape)
    order = torch.argsort((video_sizes != TILE).to(torch.int8), stable=True).tolist()
    video_sizes = video_sizes[order]
    video_tokens = torch.cat([video_slices[i] for i in order])
    sizes = torch.cat((torch.tensor(prefix_sizes, dtype=torch.long), video_sizes))
    prefix_length = sum(segments)
    tiled_to_packed = torch.cat((torch.arange(prefix_length), video_tokens + prefix_length))
    num_tiles = sizes.numel()
    slot = torch.arange(TILE)
    slots = (torch.arange(num_tiles)[:, None] * TILE + slot[None, :])[slot[None, :] < sizes[:, None]]
    packed_to_tiled = slots[torch.argsort(tiled_to_packed)]
    total = prefix_length + math.prod(video_shape)
    row = torch.full((num_tiles * TILE + TILE,), total, dtype=torch.int32)
    row[packed_to_tiled] = torch.arange(total, dtype=torch.int32)
    return SimpleNamespace(total_seq_length=total, num_tiles=num_tiles, tile_elements=TILE,
                           variable_block_sizes=sizes.to(device), tiled_to_packed_row=row.to(device))


def make_inputs(case):
    b, h, t, hh, w, d = case.shape
    meta = build_metadata(PREFIX, (t, hh, w), case.device)
    s = meta.total_seq_length
    proj = case.randn(b, s, h, d, dtype=torch.bfloat16)  # the projection, [B, S, H, D]
    return (proj.transpose(1, 2), meta)  # as the backend passes it: [B, H, S, D], a transposed view


def reference(tensor, metadata):
    b, h, s, d = tensor.shape
    rows = metadata.tiled_to_packed_row[:metadata.num_tiles * TILE].long().view(metadata.num_tiles, TILE)
    keep = rows < s
    x = tensor.double()
    gathered = x[:, :, rows.clamp_max(s - 1)] * keep.view(1, 1, metadata.num_tiles, TILE, 1)
    pooled = gathered.sum(3) / metadata.variable_block_sizes.double().view(1, 1, -1, 1)
    return pooled.float()
