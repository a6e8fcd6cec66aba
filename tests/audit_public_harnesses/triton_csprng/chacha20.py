# Audit harness for tests/audit_public_corpus/triton_csprng/chacha20.py (triton-csprng's triton_csprng/chacha20.py):
# chacha20_blocks(states [num_blocks, 16] uint32, step=0, block_size=128) -> [num_blocks, 16] uint32: the ChaCha20
# block function (RFC 8439: 20 rounds, then the input state added word-wise mod 2**32) of each row, one row per lane,
# block_size rows per program; with step != 0 the 64-bit counter (words 12, 13) of each state is advanced in place.
# Called as the package's ChaCha20Rng.blocks / _next_bytes call it (the README's stream: rng.uint32, rng.bytes, the
# samplers on top): states = make_chacha20_state(num_blocks=..., key=8 words, nonce=2 words, counter=...) (contiguous
# uint32, the counter split over words 12-13 with its carry), step 0. Here 300 blocks (three programs, a ragged last
# one) from the README's key list(range(8)), nonce [123, 456] and a counter just below 2**32 (the carry into word 13
# inside the batch). The reference is the file's own CPU path (chacha20_blocks on CPU tensors: the vectorised
# PyTorch rounds, int64 words masked to 32 bits), written out here in the same words; on the CPU tests the package
# checks it against RFC 8439's test vectors (tests/ in the sdist). Stand-ins: the file imports `from ._triton import
# require_triton, tl, triton` (the package's guard for a missing Triton): a stand-in package triton_csprng whose
# `_triton` module gives triton, triton.language and a no-op require_triton, and the file's relative import resolved
# in it (its __package__ set in its own frames, as moe-ops' harness does); chacha20_blocks takes its Triton path only
# for CUDA states (`if not states.is_cuda:` the CPU path): is_cuda is answered yes for the audited file's own frames
# only (as lion-pytorch's stand-in); its `with torch.cuda.device(states.device)` is the audit worker's no-op device
# guard under the interpreter.
import builtins
import sys
import types

import torch
import triton
import triton.language as tl

_PKG = "triton_csprng"
_FILE = "triton_csprng/chacha20.py"
_FLAG = "_p2t_triton_csprng_chacha20"
_MASK32 = 0xFFFFFFFF
_CONST = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)

if getattr(sys.modules.get(_PKG), "__file__", None) is None:  # a real triton_csprng is left alone
    sys.modules.setdefault(_PKG, types.ModuleType(_PKG)).__path__ = []
    _shim = types.ModuleType(f"{_PKG}._triton")
    _shim.triton, _shim.tl, _shim.TRITON_AVAILABLE = triton, tl, True
    _shim.require_triton = lambda: None
    sys.modules.setdefault(f"{_PKG}._triton", _shim)

if not getattr(builtins, _FLAG, False):
    _PREV_IMPORT = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level and globals and str(globals.get("__file__", "")).endswith(_FILE):
            globals["__package__"] = _PKG  # the file's relative import resolves in the stand-in package
        return _PREV_IMPORT(name, globals, locals, fromlist, level)

    builtins.__import__ = _import
    setattr(builtins, _FLAG, True)

_IS_CUDA = torch.Tensor.is_cuda
_TRAMPOLINES: dict = {}


def _as_caller(fget, self, filename):
    """An earlier harness's stand-in (a property that looks one frame up for its own file) asked from a frame that
    carries the real caller's file name, so that stand-ins chained in one process each still see their file."""
    t = _TRAMPOLINES.get(filename)
    if t is None:
        ns: dict = {}
        exec(compile("def _t(fget, self):\n    return fget(self)\n", filename, "exec"), ns)  # noqa: S102
        t = _TRAMPOLINES[filename] = ns["_t"]
    return t(fget, self)


def _is_cuda(self):
    filename = sys._getframe(1).f_code.co_filename
    if filename.endswith(_FILE):
        return True
    if isinstance(_IS_CUDA, property):  # another harness's stand-in, installed before this one
        return _as_caller(_IS_CUDA.fget, self, filename)
    return _IS_CUDA.__get__(self)


if not getattr(torch.Tensor, _FLAG, False):
    torch.Tensor.is_cuda = property(_is_cuda)
    setattr(torch.Tensor, _FLAG, True)

ENTRY = "chacha20_blocks"
AUDIT_SHAPE = (300,)  # ChaCha20 blocks (64 bytes each): 19,200 random bytes
TOLERANCES = {"uint32": (0.0, 0.0)}  # a cipher: bit-exact


def states(num_blocks, key=tuple(range(8)), nonce=(123, 456), counter=0, device="cpu"):
    """make_chacha20_state's layout: constants, key, 64-bit counter (+ row) split low/high, nonce."""
    ctr = torch.arange(num_blocks, dtype=torch.int64) + counter
    rows = torch.zeros(num_blocks, 16, dtype=torch.int64)
    rows[:, 0:4] = torch.tensor(_CONST)
    rows[:, 4:12] = torch.tensor(key)
    rows[:, 12] = ctr & _MASK32
    rows[:, 13] = (ctr >> 32) & _MASK32
    rows[:, 14:16] = torch.tensor(nonce)
    return rows.to(torch.uint32).to(device).contiguous()


def make_inputs(case):
    (n,) = case.shape
    return (states(n, counter=(1 << 32) - 150, device=case.device),)


def _rotl(v, s):
    return ((v << s) | (v >> (32 - s))) & _MASK32


def _qr(w, a, b, c, d):
    w[a] = (w[a] + w[b]) & _MASK32
    w[d] = _rotl(w[d] ^ w[a], 16)
    w[c] = (w[c] + w[d]) & _MASK32
    w[b] = _rotl(w[b] ^ w[c], 12)
    w[a] = (w[a] + w[b]) & _MASK32
    w[d] = _rotl(w[d] ^ w[a], 8)
    w[c] = (w[c] + w[d]) & _MASK32
    w[b] = _rotl(w[b] ^ w[c], 7)


def reference(st, step=0, block_size=128):
    if st.ndim != 2 or st.shape[1] != 16 or st.dtype != torch.uint32:
        raise ValueError("states must be [num_blocks, 16] uint32")
    init = [c.to(torch.int64).cpu() for c in st.unbind(1)]
    w = [c.clone() for c in init]
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                           (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
            _qr(w, a, b, c, d)
    return torch.stack([(x + i) & _MASK32 for x, i in zip(w, init)], dim=1).to(torch.uint32).to(st.device)
