# Audit harness for tests/audit_public_corpus/moe_ops/permute_ops.py (moe-ops's moe_ops/permute_ops.py):
# permute(input, indices, num_out_tokens=0, E=None) -> (permuted [tokens * K, cols], row_id_map [K * tokens] int32,
# offsets [E + 1] int32): the tokens' rows copied into expert order (a counting sort: a histogram + prefix sum kernel
# gives offsets, then one program per (token, k) takes the next slot of its expert with an atomic counter), row_id_map
# [k * tokens + t] = the row token t's k-th copy went to, offsets the experts' start rows (offsets[0] = 0). Called as the
# package's MoE layer (tests/test_correctness.py, _SingleGpuMoE.forward) calls it: permute(x, indices_i32), E left out
# (the function then takes E = indices.max() + 1), x the hidden states [tokens, d_model] bf16 contiguous, indices =
# fused_topk_softmax's [tokens, K] expert ids as int32; the README passes E=64 explicitly. Mixtral's 8 experts, top-2,
# d_model 256 (cut for the interpreter), 32 tokens, routes drawn so every expert gets at least one token (as a real
# router's over 32 tokens does). The reference is a stable counting sort (rows of one expert in (token, k) order), the
# order the interpreter's in-order programs give; on a GPU the atomic counter hands out an expert's slots in arrival
# order, so the row order inside an expert (and row_id_map with it) may differ from run to run (see the corpus README).
# Stand-in: the file's `from .unpermute_ops import unpermute_forward` is resolved against a stand-in package moe_ops
# whose path is the corpus folder (its __package__ is set in the file's frames, as auto-gptq's harness does), so it
# loads the corpus copy (moe_ops/unpermute_ops.py, unchanged).
import builtins
import sys
import types
from pathlib import Path

import torch

_DIR = Path(__file__).resolve().parents[2] / "audit_public_corpus" / "moe_ops"
_PKG = "moe_ops"
_FILE = "moe_ops/permute_ops.py"
if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real moe_ops is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = [str(_DIR)]

if not getattr(builtins, "_p2t_moe_ops_permute", False):
    _PREV_IMPORT = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILE):
            globals["__package__"] = _PKG  # the file's relative import resolves in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    builtins.__import__ = _import
    builtins._p2t_moe_ops_permute = True

ENTRY = "permute"
AUDIT_SHAPE = (32, 256, 8)  # tokens, d_model, experts E
TOP_K = 2


def make_inputs(case):
    t, d, e = case.shape
    k = min(TOP_K, e)
    x = case.randn(t, d, dtype=torch.bfloat16)
    # top-k of random router scores: k distinct experts per token
    idx = case.rand(t, e, dtype=torch.float32).argsort(dim=-1)[:, :k].contiguous()
    idx[: min(t, e), 0] = torch.arange(min(t, e), device=idx.device)  # every expert routed to at least once
    idx[: min(t, e), 1:] = (idx[: min(t, e), :1] + torch.arange(1, k, device=idx.device)) % e
    return (x, idx.to(torch.int32))


def reference(input, indices, num_out_tokens=0, E=None):
    if input.dim() != 2 or indices.dim() != 2 or indices.shape[0] != input.shape[0]:
        raise ValueError("input [tokens, cols], indices [tokens, K]")
    t, k = indices.shape
    flat = indices.reshape(-1).long()
    e = E if E else int(flat.max()) + 1
    order = torch.sort(flat, stable=True).indices  # slot -> (token, k) flat index t * K + k
    num_out = max(num_out_tokens, t * k)
    permuted = torch.zeros(num_out, input.shape[1], dtype=input.dtype, device=input.device)
    permuted[: t * k] = input[order // k]
    dest = torch.empty_like(order)
    dest[order] = torch.arange(t * k, device=order.device)
    row_id_map = dest.reshape(t, k).T.reshape(-1).to(torch.int32)  # [k * tokens + t]
    offsets = torch.zeros(e + 1, dtype=torch.int32, device=input.device)
    offsets[1:] = torch.cumsum(torch.bincount(flat, minlength=e), 0).to(torch.int32)
    return permuted, row_id_map, offsets
