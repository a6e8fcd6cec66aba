# Audit harness for tests/audit_public_corpus/flash_kmeans/centroid_update_triton.py:
# triton_centroid_update_sorted_euclid(x, cluster_ids, old_centroids) -> the new centroids [B, K, D] in x's dtype:
# centroid k of batch b is the mean of the rows x[b, n] with cluster_ids[b, n] == k, or old_centroids[b, k] when no
# row is assigned to k. Called as flash_kmeans/kmeans_triton_impl.py's _euclid_iter (each Lloyd iteration of
# batch_kmeans_Euclid) and kmeans_large.py call it: x [B, N, D] fp16/fp32, cluster_ids the int32 [B, N] ids that
# euclid_assign_triton returns (in [0, K)), old_centroids [B, K, D] in x's dtype, the default BLOCK_N=256.
# Stand-ins: the file imports tqdm.trange (its benchmark main only), not installed here: a stand-in (range). The
# entry asserts x.is_cuda and cluster_ids.is_cuda, true for the GPU tensors its callers pass and false for the CPU
# tensors the interpreter runs on: a stand-in that says yes, for the audited file's own frames only (as deepspeed's
# on_accelerator stand-in); every other caller of is_cuda gets torch's answer.
import sys
import types

import torch

sys.modules.setdefault("tqdm", types.SimpleNamespace(trange=range))

_IS_CUDA = torch.Tensor.is_cuda


def _is_cuda(self):
    if sys._getframe(1).f_code.co_filename.endswith("flash_kmeans/centroid_update_triton.py"):
        return True
    return _IS_CUDA.__get__(self)


if not getattr(torch.Tensor, "_p2t_flash_kmeans", False):
    torch.Tensor.is_cuda = property(_is_cuda)
    torch.Tensor._p2t_flash_kmeans = True

ENTRY = "triton_centroid_update_sorted_euclid"
AUDIT_SHAPE = (2, 300, 24, 5)  # B batches, N points, D dims, K clusters


def make_inputs(case):
    b, n, d, k = case.shape
    x = case.randn(b, n, d)
    ids = case.randint(0, max(k, 1), (b, n), dtype=torch.int32)
    return (x, ids, case.randn(b, k, d))


def reference(x, cluster_ids, old_centroids, *, BLOCK_N=256, centroid_sums=None, centroid_cnts=None,
              calculate_new=True):
    b, n, d = x.shape
    k = old_centroids.shape[1]
    ids = cluster_ids.long()
    if ids.shape != (b, n) or bool(((ids < 0) | (ids >= k)).any()):
        raise ValueError("cluster_ids must be [B, N] ids in [0, K)")
    sums = torch.zeros(b, k, d, dtype=torch.float64, device=x.device)
    sums.scatter_add_(1, ids[..., None].expand(b, n, d), x.double())
    cnt = torch.zeros(b, k, dtype=torch.float64, device=x.device).scatter_add_(1, ids, torch.ones_like(ids, dtype=torch.float64))
    new = torch.where(cnt[..., None] > 0, sums / cnt.clamp(min=1)[..., None], old_centroids.double())
    return new.to(x.dtype)
