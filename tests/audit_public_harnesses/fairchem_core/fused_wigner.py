# Audit harness for tests/audit_public_corpus/fairchem_core/fused_wigner.py: wigner_conv1_fused_op(x_full, edge_index,
# wigner, radial, C) = WignerConv1FusedFunction.apply -> (m0, m1, m2), UMA's producer-side fused edge op (lmax = mmax
# = 2): for each edge e = (s, t) = edge_index[:, e], rotate the 9 L-major coefficients of x_full[s] and x_full[t]
# [9, C] by the block-diagonal Wigner matrix of the edge (blocks 1x1, 3x3, 5x5, stored row-major in wigner [E, 35]),
# permute the rows L -> M (M row m is L row [0, 2, 6, 3, 7, 1, 5, 8, 4][m]), scale M row m by radial block
# [0, 1, 2, 3, 4, 3, 4, 5, 5][m] (radial [E, 6 * 2C]: block b is [src C | tgt C]) and pack rows 0-2, 3-6, 7-8 as
# [src | tgt] into m0 [E, 3 * 2C], m1 [E, 4 * 2C], m2 [E, 2 * 2C]. Its autograd backward gives d x_full, d wigner
# (compact) and d radial. Called as escn_md_block's fused SO2Conv path (UMASFastGPUBackend) calls it on every layer:
# float32 node features [N, 9, sphere_channels], int64 edge_index [2, E] (or a column chunk of it), compact wigner
# [E, 35], the edge embedding x_edge as radial, C = sphere_channels (128 in UMA-S; a power of 2 here), in training
# (forces are gradients). The file imports fairchem's triton/constants.py (FUSED_WIGNER_GRID_E_STRIDE, a stand-in with
# its value) and triton/kernels.py, its kernels: the stand-in package's path is the corpus folder, so that import
# loads the corpus copy of kernels.py (fairchem_core/kernels.py, unchanged) and the probes run the package's own
# kernels.
import sys
import types
from pathlib import Path

import torch

_PKG = "fairchem.core.models.uma.triton"
for _name in ("fairchem", "fairchem.core", "fairchem.core.models", "fairchem.core.models.uma", _PKG,
              _PKG + ".constants"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules[_PKG + ".constants"].FUSED_WIGNER_GRID_E_STRIDE = 131072  # triton/constants.py
# the package's kernels module is the corpus copy: `from fairchem.core.models.uma.triton.kernels import ...` finds it
sys.modules[_PKG].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "fairchem_core")]

ENTRY = "wigner_conv1_fused_op"
AUDIT_SHAPE = (6, 10, 16)  # N nodes, E edges, C sphere channels

L_OF_M = [0, 2, 6, 3, 7, 1, 5, 8, 4]
RADIAL_BLOCK_OF_M = [0, 1, 2, 3, 4, 3, 4, 5, 5]


def make_inputs(case):
    n, e, c = case.shape
    edge_index = case.randint(0, n, (2, e), dtype=torch.int64)
    return (case.randn(n, 9, c), edge_index, case.randn(e, 35), case.randn(e, 12 * c), c)


def _dense(wigner):
    e = wigner.shape[0]
    w = wigner.new_zeros(e, 9, 9)
    w[:, 0, 0] = wigner[:, 0]
    w[:, 1:4, 1:4] = wigner[:, 1:10].reshape(e, 3, 3)
    w[:, 4:9, 4:9] = wigner[:, 10:35].reshape(e, 5, 5)
    return w


def reference(x_full, edge_index, wigner, radial, C):
    e = edge_index.shape[1]
    if x_full.shape[1:] != (9, C) or radial.shape != (e, 12 * C):
        raise ValueError("x_full must be [N, 9, C] and radial [E, 12C]")
    w = wigner if wigner.ndim == 3 else _dense(wigner)
    if w.shape != (e, 9, 9):
        raise ValueError("wigner must be [E, 35] or [E, 9, 9]")
    w = w.double()
    ys = torch.bmm(w, x_full.double()[edge_index[0]])[:, L_OF_M]  # [E, 9, C], M-major
    yt = torch.bmm(w, x_full.double()[edge_index[1]])[:, L_OF_M]
    rad = radial.double().reshape(e, 6, 2 * C)[:, RADIAL_BLOCK_OF_M]  # [E, 9, 2C]
    rows = torch.cat((ys * rad[..., :C], yt * rad[..., C:]), dim=2).to(x_full.dtype)  # [E, 9, 2C]
    return rows[:, 0:3].reshape(e, -1), rows[:, 3:7].reshape(e, -1), rows[:, 7:9].reshape(e, -1)
