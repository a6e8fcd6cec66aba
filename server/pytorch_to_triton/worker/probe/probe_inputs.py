"""Every input the audit's probes invent, and why: the one home of probe cases (STYLE.md habit 9).

Each function takes the example call's inputs (or its case shape) and returns labelled variants; the label is what
a reproducer names (`--only LABEL`). Tiers, cheapest first, all small enough for the CPU interpreter:
- layout: the same values in other layouts (a transposed copy, a strided slice with poison in the gaps);
- rows: a prefix of the batch (1 row, half, all but one) that must give the same rows as the full batch;
- sizes: each dimension at 1, odd (17), and one either side of the power of two at or above the example's size
  (block boundaries: blocks are powers of two in practice); the first dimension (the batch) also at 0, an empty
  batch (an inner dimension of 0, a head of no channels, means nothing and is not tried);
- sentinel: a quarter of the integer entries set to the entry's own sentinel default (ignore_index=-100 ...);
- magnitude: values x100 (softmax/exp overflow) and shifted by -120 (exp underflow to 0, log(0) = -inf).

Tiers (tier_rules.py, shared with run_validation): every variant here is the callers' kind of input (contract) unless
its failure shows it is one of the robustness kinds, which probes.py records per failure (Probe.aside): a strided 1-D
tensor (STRIDED_1D: "1d"), a failure only through a tensor that does not carry the batch ("weight"), only with a
strided last dimension while ROW_STRIDED passes ("lastdim"), only at an odd size the example has even ("structure"),
only at a batch of 0 (has_empty: "empty"), only with TF32 dots ("precision"). The server's audit/evidence.py tiers
them against the contract (audit/contract.py).

A KernelBench-form task (kb_* below) has no case shape: its sizes are module-level constants (sizes.py), and the
rows and sizes probes move those, never the tensors' shapes. The sizes probe moves one varied constant at a time
(the batch-like first one also to 0), the sizes computed from it follow, and a variant the reference rejects as it
is (on fake tensors) keeps the relations among the problem's sizes instead (cases.py repairs its variants the same
way); one it rejects either way is left out. A prefix of the batch is the problem at a smaller batch constant only
when that constant is the inputs' first dimension alone and the model is not built from it.
"""

from __future__ import annotations

from typing import Any

import torch

from ..validation import sizes as sz
from ..validation.nest import tensors_in
from ..validation.poison import fill_poison, original

SENTINEL_PARAMS = ("ignore_index", "padding_idx", "pad_token_id", "pad_id", "ignore_id")
MAGNITUDES = (("scale x100", 100.0, 0.0), ("shift -120", 1.0, -120.0))
MAX_SIZE_VARIANTS = 10


def fresh_copies(inputs: list[Any]) -> list[Any]:
    """The inputs again, every tensor (in lists, tuples and dicts too) a copy with the same strides in a storage of
    its own: an entry that writes in place (rotary embedding on q and k, column views of one packed qkv buffer) leaves
    the caller's tensors as they were, so each call is judged on the inputs the caller gives (issue 35: the repeat,
    rows and layout probes saw values the example call had already rotated). Views of one storage stay views of one
    copy (their aliasing is part of the input), which holds the bytes from the first to the last element any of them
    spans (a prefix of rows is a storage of its rows alone, as the bounds check expects; the gaps between a strided
    view's elements keep their poison), starting at the same offset modulo 16 bytes (Triton specialises on it)."""
    spans: dict[tuple[int, str], tuple[int, int]] = {}
    for t in tensors_in(inputs):
        if _plain(t):
            key, lo, hi = _span(t)
            old = spans.get(key)
            spans[key] = (lo, hi) if old is None else (min(lo, old[0]), max(hi, old[1]))
    memo: dict[tuple[int, str], Any] = {}
    return [_fresh(x, spans, memo) for x in inputs]


ALIGN = 16  # bytes: the pointer alignment Triton specialises a launch on


def _plain(t: torch.Tensor) -> bool:
    """A strided dense tensor with a storage of its own bytes (not sparse, meta, or a subclass of torch.Tensor)."""
    return type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout == torch.strided and not t.is_meta and \
        all(s >= 0 for s in t.stride())


def _span(t: torch.Tensor) -> tuple[tuple[int, str], int, int]:
    """(storage key, first byte, end byte) of the elements t can reach; the first byte rounded down to ALIGN."""
    st, es = t.untyped_storage(), t.element_size()
    first = t.storage_offset() * es
    last = first + (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * es if t.numel() else first
    return (st.data_ptr(), str(t.device)), first - first % ALIGN, last


def _fresh(x: Any, spans: dict[tuple[int, str], tuple[int, int]], memo: dict[tuple[int, str], Any]) -> Any:
    if isinstance(x, list):
        return [_fresh(v, spans, memo) for v in x]
    if type(x) is tuple:
        return tuple(_fresh(v, spans, memo) for v in x)
    if isinstance(x, dict):
        return {k: _fresh(v, spans, memo) for k, v in x.items()}
    if not isinstance(x, torch.Tensor):
        return x
    if not _plain(x):
        return x.clone() if x.is_contiguous() else x
    key, _, _ = _span(x)
    lo, hi = spans[key]
    with torch.no_grad():
        if key not in memo:
            raw = torch.empty(0, dtype=torch.uint8, device=x.device).set_(
                x.untyped_storage(), 0, (x.untyped_storage().nbytes(),), (1,))
            memo[key] = raw[lo:hi].clone().untyped_storage()
        y = torch.empty(0, dtype=x.dtype, device=x.device).set_(
            memo[key], (x.storage_offset() * x.element_size() - lo) // x.element_size(), x.size(), x.stride())
    return y.requires_grad_(x.requires_grad)


def _floating(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def layouts(inputs: list[Any]) -> dict[str, list[Any]]:
    """Same values, other layouts: rows of a wider buffer (ROW_STRIDED), 'transposed' (rank >= 2) and 'strided'
    (every other element of a wider row)."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor) and x.numel() > 1]
    out: dict[str, list[Any]] = {}
    if any(t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1 for t in tensors):
        out["transposed"] = [x.transpose(-1, -2).contiguous().transpose(-1, -2)
                             if isinstance(x, torch.Tensor) and x.dim() >= 2 else x for x in inputs]

    def strided(x: torch.Tensor) -> torch.Tensor:
        big = original("empty")((*x.shape[:-1], 2 * x.shape[-1]), dtype=x.dtype, device=x.device)
        fill_poison(big)  # a kernel that ignores the stride reads the gaps: NaN (or the integer sentinel)
        view = big[..., ::2]
        view.copy_(x)
        return view

    def wide(x: Any, rank: int) -> bool:
        # integer tensors of rank >= 2 too (int8 activations, packed codes): the lastdim and weight rules
        # (probes.py) need to know whether rows of a wider buffer pass for the same tensor that fails transposed
        return isinstance(x, torch.Tensor) and x.dtype != torch.bool and x.dim() >= rank and x.shape[-1] > 1 and \
            (x.is_floating_point() or rank >= 2)

    def padded_rows(x: torch.Tensor) -> torch.Tensor:
        # rows of a wider buffer (a slice, a padded cache), and for rank >= 3 a padded middle dim too (a head-padded
        # cache): every stride but the last differs from the dense one, the last dim stays unit-stride
        pad = [3 if i == x.dim() - 2 and x.dim() >= 3 else 0 for i in range(x.dim() - 1)] + [16]
        big = original("empty")([n + q for n, q in zip(x.shape, pad)], dtype=x.dtype, device=x.device)
        fill_poison(big)
        view = big[tuple(slice(0, n) for n in x.shape)]
        view.copy_(x)
        return view

    if any(wide(t, 2) for t in tensors):  # the activations strided; 1-D weights and biases apart (STRIDED_1D)
        out[ROW_STRIDED] = [padded_rows(x) if wide(x, 2) else x for x in inputs]
        out["strided"] = [strided(x) if wide(x, 2) else x for x in inputs]
        if any(wide(t, 1) and t.dim() == 1 for t in tensors):
            out[STRIDED_1D] = [strided(x) if wide(x, 1) and x.dim() == 1 else x for x in inputs]
    elif any(wide(t, 1) for t in tensors):  # only vectors: they are the data
        out["strided"] = [strided(x) if wide(x, 1) else x for x in inputs]
    return out


STRIDED_1D = "strided 1-D"  # a variant whose failures are verify notes (probes.py, Probe.aside)
# Rows of a wider buffer, the last dim unit-stride: the non-contiguity of slices, padded caches and permuted batch or
# head dims. An entry that passes it but fails only when the last dim itself is strided (transposed, every other
# element) assumes Triton's usual unit last-dim stride: a verify note, since its callers may guarantee it.
ROW_STRIDED = "rows of a wider buffer"
LASTDIM = ("transposed", "strided")


def one_at_a_time(inputs: list[Any], variant: list[Any]) -> dict[int, list[Any]]:
    """index -> the inputs with only that tensor taken from the layout variant (every tensor the variant changed)."""
    return {i: [v if j == i else a for j, a in enumerate(inputs)] for i, (a, v) in enumerate(zip(inputs, variant))
            if isinstance(v, torch.Tensor) and v is not a}


def base_variant(label: str) -> str:
    """The layout variant a label names ('transposed, input 2 only' -> 'transposed')."""
    return label.split(", input ", 1)[0]


def batch_size(inputs: list[Any]) -> int | None:
    """The batch: the first dimension of the first tensor input of rank >= 2 (rank 1 has no rows to split)."""
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.dim() >= 2:
            return int(x.shape[0])
    return None


def indexes_rows(inputs: list[Any], b: int | None) -> int | None:
    """The index of an integer input that the rows probe would not slice (its first dim is not the batch) whose
    values reach the batch size: offsets of a jagged batch (last value = the number of rows) or row indices; None
    when there is none. A prefix of the rows would leave it pointing past them (fbgemm's jagged ops)."""
    if b is None or b < 2:
        return None
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor) and not t.is_floating_point() and t.dtype != torch.bool and t.numel() and \
                (t.dim() == 0 or t.shape[0] != b):
            top = int(t.max())
            if b // 2 <= top <= b:
                return i
    return None


def row_prefixes(inputs: list[Any]) -> dict[str, tuple[int, list[Any]]]:
    """label -> (k, inputs with only the first k rows of every tensor whose first dimension is the batch)."""
    b = batch_size(inputs)
    if b is None or b < 2:
        return {}
    out = {}
    for k in sorted({1, b // 2, b - 1} - {0}):
        out[f"first {k} of {b} rows"] = (k, [x[:k].contiguous() if isinstance(x, torch.Tensor) and x.dim() >= 1
                                             and x.shape[0] == b else x for x in inputs])
    return out


def _pow2_at_or_above(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def boundary_shapes(shape: Any) -> dict[str, Any]:
    """label -> a case shape (tuple, or dict of sizes) with one dimension moved to a boundary size."""
    if isinstance(shape, dict):
        dims = [(k, v) for k, v in shape.items() if isinstance(v, int) and v > 0]
    elif isinstance(shape, (tuple, list)):
        dims = [(i, v) for i, v in enumerate(shape) if isinstance(v, int) and v > 0]
    else:
        return {}
    out: dict[str, Any] = {}
    for n, (key, size) in enumerate(dims):
        p = max(16, _pow2_at_or_above(size))
        for new in ((0,) if n == 0 else ()) + (1, 17, p - 1, p + 1):
            if new == size:
                continue
            s = dict(shape) if isinstance(shape, dict) else list(shape)
            s[key] = new
            label = f"shape {tuple(s) if not isinstance(s, dict) else s}"
            out.setdefault(label, s if isinstance(s, dict) else tuple(s))
    # the empty and single sizes of every dimension first: they are the cheapest and the likeliest to crash
    ranked = sorted(out.items(), key=lambda kv: (0 in _sizes(kv[1]) and 1 or 2, _numel(kv[1])))
    return dict(ranked[:MAX_SIZE_VARIANTS])


def has_empty(shape: Any) -> bool:
    """A case shape (tuple, or dict of sizes) with a dimension of 0."""
    sizes = shape.values() if isinstance(shape, dict) else shape if isinstance(shape, (tuple, list)) else ()
    return any(isinstance(s, int) and s == 0 for s in sizes)


def moved_dim(example: Any, shape: Any) -> tuple[Any, int, int] | None:
    """(key, example size, new size) of the one dimension `shape` moved from `example`; None otherwise."""
    if isinstance(example, dict) and isinstance(shape, dict):
        pairs = [(k, example.get(k), shape.get(k)) for k in shape]
    elif isinstance(example, (tuple, list)) and isinstance(shape, (tuple, list)) and len(example) == len(shape):
        pairs = list(zip(range(len(shape)), example, shape))
    else:
        return None
    moved = [(k, a, b) for k, a, b in pairs if a != b and isinstance(a, int) and isinstance(b, int)]
    return moved[0] if len(moved) == 1 else None


def _sizes(shape: Any) -> list[int]:
    return list(shape.values()) if isinstance(shape, dict) else list(shape)


def _numel(shape: Any) -> int:
    n = 1
    for s in _sizes(shape):
        n *= max(1, int(s)) if isinstance(s, int) else 1
    return n


def with_sentinel(inputs: list[Any], value: int) -> list[Any] | None:
    """Integer tensor inputs with every fourth entry set to the sentinel; None when there is no integer tensor."""
    out, hit = [], False
    for x in inputs:
        if isinstance(x, torch.Tensor) and not x.is_floating_point() and x.dtype != torch.bool and x.numel():
            y = x.clone()
            y.view(-1)[::4] = value
            out.append(y)
            hit = True
        else:
            out.append(x)
    return out if hit else None


def magnitudes(inputs: list[Any]) -> dict[str, list[Any]]:
    """label -> floating inputs scaled or shifted (integers, indices, untouched)."""
    if not any(_floating(x) for x in inputs):
        return {}
    return {label: [x * scale + shift if _floating(x) else x for x in inputs] for label, scale, shift in MAGNITUDES}


# ---- KernelBench form: the sizes move through the module-level constants -------------------------------------------
def kb_batch(mod: Any, sizes: dict[str, int], b: int) -> tuple[str | None, str]:
    """(the size constant that is get_inputs()'s batch dimension `b`, '') when a prefix of the batch is the same
    problem at a smaller value of it, else (None, why not)."""
    base = sz.input_shapes(mod, sizes)
    if base is None:
        return None, "get_inputs() cannot be built on fake tensors, so its batch constant is unknown"
    built, follows = sz.built_from(mod), sz.derived(mod)
    for k in sz.size_constants(mod):  # a batch of 4 is a batch too: the shapes below decide, not the size
        if sizes.get(k) != b or k in follows or sz.STRUCTURAL.search(k):
            continue
        moved = sz.settle(mod, {**sizes, k: b + 1})
        if any(moved[o] != v for o, v in sizes.items() if o != k):
            continue  # other sizes follow it: a prefix is not the problem at a smaller k
        want = [(b + 1, *s[1:]) if s and s[0] == b else s for s in base]
        if sz.input_shapes(mod, moved) != want:
            continue
        if k in built:
            return None, (f"the model is built from {k} (get_init_inputs reads it): a prefix of the batch is another "
                          "problem, not the same one at a smaller size")
        return k, ""
    return None, (f"no size constant of the problem is the inputs' first dimension ({b}) alone: a prefix of it is "
                  "not the problem at a smaller size")


def kb_boundary_sizes(mod: Any, sizes: dict[str, int]) -> tuple[dict[str, dict[str, int]], list[str]]:
    """(label -> the problem's sizes with one varied constant moved to a boundary, notes on the variants left out).
    The label names what moved ('dim=17', or 'n_embd=17, n_head=1' when a relation is kept)."""
    defaults = sz.size_constants(mod)
    every = sz.varied(defaults, {}, sz.derived(mod))
    rels = sz.relations(defaults, every)
    out: dict[str, tuple[dict[str, int], int]] = {}
    left: list[str] = []
    for n, k in enumerate(every):
        size = sizes[k]
        p = max(16, _pow2_at_or_above(size))
        for new in ((0,) if n == 0 else ()) + (1, 17, p - 1, p + 1):
            if new == size:
                continue
            as_is = sz.settle(mod, {**sizes, k: new})
            options = [as_is] + [sz.settle(mod, sz.repair(as_is, [r for r in rels if r[0] in kinds], {k}))
                                 for kinds in (("le",), ("le", "div"), ("le", "div", "eq"))]
            chosen = None
            for option in dict.fromkeys(tuple(o.items()) for o in options):
                n_elems, accepted = sz.footprint(mod, dict(option))
                if accepted is not False:
                    chosen = (dict(option), n_elems or 0)
                    break
            if chosen is None:
                left.append(f"{k}={new} (the reference rejects it, also with the relations among the sizes kept)")
                continue
            label = sz.fmt({q: v for q, v in chosen[0].items() if v != sizes.get(q)})
            out.setdefault(label, chosen)
    ranked = sorted(out.items(), key=lambda kv: (0 not in kv[1][0].values(), kv[1][1]))
    return {label: s for label, (s, _) in ranked[:MAX_SIZE_VARIANTS]}, left
