# Audit harness for tests/audit_public_corpus/gemlite/bitpack.py: pack_weights_over_cols_triton(W_q, W_nbits,
# packing_bitwidth, transpose) -> (W_q_out, elements_per_sample): packs each row's quantised values (W_q [rows, cols],
# values < 2**W_nbits) packing_bitwidth // W_nbits to a word, value j of a word in bits W_nbits * j (the file's own
# pack_weights_over_cols_torch does the same in PyTorch), W_q_out [rows, cols / elements_per_sample], transposed (a
# view) when transpose. Called as gemlite's core.GemLiteLinearTriton.pack calls it for uint8 weights on a CUDA device:
# W_q.view((out_features, in_features)) uint8 (the quantiser's integer codes, e.g. HQQ's or a GPTQ checkpoint's
# unpacked codes), W_nbits 4, packing_bitwidth 32 (GemLiteLinearTriton.PACKING_BITWIDTH, the default), transpose True;
# pack() then calls .contiguous() on the transposed result. 8 x 256 here (a layer's real 4096 x 4096 is 32,768
# programs: minutes under the interpreter).
# Stand-ins: the file's `from .dtypes import ...` is resolved against a stand-in package `gemlite` whose path is the
# corpus folder (its __package__ is set in the file's frames), so it loads the corpus copy (gemlite/dtypes.py, unchanged;
# it imports torch and triton.language only).
import builtins
import sys
import types
from pathlib import Path

import torch

_FILE = "gemlite/bitpack.py"
sys.modules.setdefault("gemlite", types.ModuleType("gemlite"))
sys.modules["gemlite"].__path__ = [str(Path(__file__).resolve().parents[2] / "audit_public_corpus" / "gemlite")]

if not getattr(builtins, "_p2t_gemlite", False):
    _PREV_IMPORT = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILE):
            globals["__package__"] = "gemlite"  # the file's relative imports resolve in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    builtins.__import__ = _import
    builtins._p2t_gemlite = True

ENTRY = "pack_weights_over_cols_triton"
AUDIT_SHAPE = (8, 256)  # out_features, in_features


def make_inputs(case):
    rows, cols = case.shape
    if cols % 8 or min(rows, cols) < 1:  # in_features: a multiple of the group size (>= 32) in gemlite's quantisers
        raise ValueError("in_features must be a multiple of packing_bitwidth / W_nbits (8)")
    return (case.randint(0, 16, (rows, cols), dtype=torch.uint8), 4, 32, True)


def reference(W_q, W_nbits, packing_bitwidth, transpose):
    per = packing_bitwidth // W_nbits
    rows, cols = W_q.shape
    if cols % per:
        raise ValueError("the columns must fill whole words (the kernel drops a partial one)")
    v = W_q.to(torch.int64).reshape(rows, cols // per, per)
    word = sum(v[..., j] << (W_nbits * j) for j in range(per))
    if packing_bitwidth == 32:
        word = word - ((word >> 31) << 32)  # two's complement into int32
    out = word.to({8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[packing_bitwidth])
    return (out.t() if transpose else out), per
