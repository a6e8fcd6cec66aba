# Audit harness for tests/audit_public_corpus/torch_fps/_triton.py (torch-fps's torch_fps/_triton.py): fps(points,
# mask, start_idx, K) -> [B, K] int64: farthest point sampling per batch row (start at start_idx[b], then repeatedly the
# valid point farthest from the selected set; ties to the lowest index; a row with fewer valid points than K repeats its
# last pick), one program per row with the K-loop inside. Called as torch_fps.farthest_point_sampling(points,
# valid_mask, k) reaches it on CUDA (api._prepare_and_resolve then _dispatch): points float32 contiguous [B, N, D],
# the valid mask as a contiguous bool [B, N], start_idx the resolved int64 [B] (the first valid index when
# random_start=False). A PointNet++ set-abstraction layer's xyz: 2 clouds of 512 points in 3-D, the second padded
# (its last 112 points invalid), 64 samples (the package's benchmark samples 512 of 1024-8192; cut for the
# interpreter: each of the K steps is a reduction over the row). The reference is the package's own PyTorch oracle
# (torch_fps/_reference.py fps_reference, "same semantics as the Triton kernels", MIT), verbatim below. The file
# imports only torch and triton: no stand-in.
import torch

ENTRY = "fps"
AUDIT_SHAPE = (2, 512, 3)  # clouds B, points N, coordinates D
SAMPLES = 64
PADDED = 112  # invalid trailing points of the second cloud


def make_inputs(case):
    b, n, d = case.shape
    points = case.rand(b, n, d, low=-1.0, high=1.0, dtype=torch.float32)
    mask = torch.ones(b, n, dtype=torch.bool, device=points.device)
    if b > 1 and n > PADDED:
        mask[1, n - PADDED:] = False
    start = torch.zeros(b, dtype=torch.long, device=points.device)  # the first valid index (random_start=False)
    return (points, mask, start, min(SAMPLES, n))


def _acc(points):
    return points if points.dtype == torch.float64 else points.float()


def reference(points, mask, start_idx, k):  # torch_fps/_reference.py fps_reference, verbatim
    if points.dim() != 3 or mask.shape != points.shape[:2]:
        raise ValueError("points [B, N, D], mask [B, N]")
    B = points.shape[0]
    n = points.shape[1]
    idx = torch.empty(B, k, device=points.device, dtype=torch.long)
    pts = _acc(points)
    valid = mask & points.isfinite().all(dim=-1)
    min_d = torch.where(valid, float("inf"), -float("inf")).to(pts.dtype)
    in_range = (start_idx >= 0) & (start_idx < n)
    last = torch.where(in_range, start_idx, torch.zeros_like(start_idx))
    rows = torch.arange(B, device=points.device)
    for i in range(k):
        idx[:, i] = last
        min_d[rows, last] = -float("inf")
        if i + 1 == k:
            break
        c = pts[rows, last]
        d = (pts - c[:, None, :]).square().sum(dim=2)
        # invalid lanes keep -inf; NaN distances never overwrite
        min_d = torch.where(valid & (d < min_d), d, min_d)
        vals, nxt = min_d.max(dim=1)
        # exhausted rows (all -inf) repeat the previous selection
        last = torch.where(vals.isneginf(), last, nxt)
    return idx
