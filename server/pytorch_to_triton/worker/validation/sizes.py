"""KernelBench sizes: the module-level integers a problem's get_inputs()/get_init_inputs() read, how to set them,
what they cost (fake tensors), the relations among them a variant must keep, and how to shrink them.

cases.py asks this module for sizes; nothing here builds a case.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import re
import types
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import torch

from .nest import tensors_in as _tensors
from .tasks import TaskError

# The interpreter costs per operation and program: 64 Ki elements (inputs + outputs) keep an elementwise or
# reduction problem at a few seconds per case; the largest dimension stays <= 512 so BLOCK-sized loops still run.
CPU_MAX_ELEMS, CPU_MAX_DIM = 1 << 16, 512
# GPU: the full size runs first; layout and odd variants run on a medium copy (seconds, not minutes, and a
# fraction of the full size's memory), small/1/0 variants on a tiny one.
GPU_MEDIUM_ELEMS, GPU_MEDIUM_DIM = 1 << 22, 4096
SMALL_ELEMS, SMALL_DIM = 1 << 12, 64
VARY_MIN = 8  # constants below this are structure (a reduction axis, kernel_size 3, 3 input channels), not sizes
# Issue 40: a repeated dimension (heads, groups, experts, batch, tiles) shrunk to 1 hides every bug that indexes it
# (`h = bh * 0` passed 21/21 cases at n_head=1). A size that is 2 in the problem stays 2, one of 3 or more stays >= 3.
MULTIPLICITY = 3
STRUCTURAL = re.compile(r"kernel|stride|pad|dilation|group|axis|eps", re.I)


# ---- size constants ------------------------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _split_key(key: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"([A-Za-z_]\w*)\[(\d+)\]", key)
    return (m.group(1), int(m.group(2))) if m else (key, None)


def _ints_of(name: str, value: Any) -> dict[str, int]:
    if _is_int(value):
        return {name: int(value)}
    if isinstance(value, (tuple, list)) and value and all(_is_int(e) for e in value):
        return {f"{name}[{i}]": int(e) for i, e in enumerate(value)}  # e.g. input_shape = (4096,)
    return {}


def _globals_read(mod: ModuleType, roots: list[Any]) -> list[str]:
    """Global names the code of `roots` reads, in order of first use, following the module's own helper functions
    and nested code (comprehensions, lambdas)."""
    order: list[str] = []
    seen: set[int] = set()

    def visit(code: types.CodeType) -> None:
        if id(code) in seen:
            return
        seen.add(id(code))
        for name in code.co_names:
            if name not in order:
                order.append(name)
        for name in code.co_names:  # helpers after the function's own names: get_inputs' order comes first
            obj = vars(mod).get(name)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                visit(obj.__code__)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                visit(c)

    for fn in roots:
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType):
            visit(code)
    return order


def size_constants(mod: ModuleType) -> dict[str, int]:
    """The problem's sizes: module-level integers (and integer-tuple elements, as 'name[i]') that get_inputs() or
    get_init_inputs() read, found from their bytecode, in order of first use (batch_size before dim)."""
    roots = [getattr(mod, n) for n in ("get_inputs", "get_init_inputs") if callable(getattr(mod, n, None))]
    out: dict[str, int] = {}
    for name in _globals_read(mod, roots):
        if name in vars(mod) and not name.startswith("__"):
            out.update(_ints_of(name, vars(mod)[name]))
    return out


def built_from(mod: ModuleType) -> set[str]:
    """The size keys get_init_inputs() reads: the sizes the model itself is built from (n_embd, in_features)."""
    init = getattr(mod, "get_init_inputs", None)
    if not callable(init):
        return set()
    return {k for name in _globals_read(mod, [init]) for k in _ints_of(name, vars(mod).get(name))}


def module_ints(mod: ModuleType) -> dict[str, int]:
    """Every module-level integer (and integer-tuple element) of the problem: what `sizes` may override."""
    out: dict[str, int] = {}
    for name, value in vars(mod).items():
        if not name.startswith("_") and not isinstance(value, ModuleType):
            out.update(_ints_of(name, value))
    return out


def check_sizes(mod: ModuleType, sizes: dict[str, Any] | None, where: str = "sizes") -> dict[str, int]:
    """Validated overrides {name: int}; an unknown name or a bad value is a usage error naming the known sizes."""
    known, allowed = size_constants(mod), module_ints(mod)
    out: dict[str, int] = {}
    for name, value in (sizes or {}).items():
        if name not in allowed:
            others = sorted(set(allowed) - set(known))
            raise TaskError("inputs", f"{where}: {name!r} is not a size of this KernelBench problem; its sizes (module-"
                            f"level integers read by get_inputs/get_init_inputs) are {fmt(known) or 'none'}"
                            + (f"; other module-level integers: {', '.join(others)}" if others else ""), usage=True)
        if not _is_int(value) and not (isinstance(value, str) and value.isdigit()):
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        if int(value) < 0:
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        out[name] = int(value)
    return out


def fmt(sizes: dict[str, int]) -> str:
    """'a=1, b=2' for a report."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def set_sizes(mod: ModuleType, originals: dict[str, Any], sizes: dict[str, int]) -> None:
    """Module globals back to their originals, then `sizes` on top (tuple elements rebuilt as tuples)."""
    for name, value in originals.items():
        setattr(mod, name, value)
    for key, value in sizes.items():
        name, idx = _split_key(key)
        if name not in originals:
            originals[name] = getattr(mod, name)
        if idx is None:
            setattr(mod, name, int(value))
        else:
            items = list(getattr(mod, name))
            items[idx] = int(value)
            setattr(mod, name, type(originals[name])(items) if isinstance(originals[name], list) else tuple(items))


@contextlib.contextmanager
def sized(mod: ModuleType, sizes: dict[str, int]) -> Iterator[None]:
    """Run with the problem's module-level sizes temporarily overridden (restored afterwards, also on errors)."""
    originals: dict[str, Any] = {}
    try:
        set_sizes(mod, originals, sizes)
        yield
    finally:
        for name, value in originals.items():
            setattr(mod, name, value)


def footprint(mod: ModuleType, sizes: dict[str, int]) -> tuple[int | None, bool | None]:
    """(elements of inputs + outputs, whether the reference accepted these sizes) from fake tensors: nothing is
    allocated, so an 8 GB problem costs nothing. (None, None) when the inputs cannot be built fake; accepted is
    None when the reference cannot run on fake tensors at all."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sized(mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
                inputs = list(mod.get_inputs())
                n = sum(t.numel() for t in _tensors(inputs))
                try:
                    model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
                    n += sum(t.numel() for t in _tensors(model(*inputs)))
                    return n, True
                except Exception:  # noqa: BLE001 - a shape the reference rejects, or an op with no fake kernel
                    return n, False
        except Exception:  # noqa: BLE001
            return None, None


def input_shapes(mod: ModuleType, sizes: dict[str, int]) -> list[tuple[int, ...] | None] | None:
    """The shape of each of get_inputs()'s values at `sizes` (None for a value that is no tensor), from fake
    tensors: nothing is allocated. None when the inputs cannot be built fake."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sized(mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True):
                return [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in mod.get_inputs()]
        except Exception:  # noqa: BLE001
            return None


# ---- automatic sizes -------------------------------------------------------------------------------------------
def multiplicity_floor(full: int) -> int:
    """The least a size that is `full` in the problem may become in a contract case: 2 stays 2, 3 or more >= 3."""
    return min(full, MULTIPLICITY)


def below_floor(full: dict[str, int], sizes: dict[str, int], keys: Any = None) -> dict[str, int]:
    """key -> its floor, for each size (of `keys`, default all) that `sizes` shrinks below multiplicity_floor."""
    return {k: multiplicity_floor(full[k]) for k in (full if keys is None else keys)
            if k in sizes and k in full and 1 <= sizes[k] < multiplicity_floor(full[k])}


def varied(consts: dict[str, int], pinned: dict[str, int], follows: Any = ()) -> list[str]:
    """The constants the automatic sizes change: sizes (>= 8, not kernel/stride/padding/...), not pinned by the user,
    and not computed from other sizes in the module's source (`follows`: those move with the sizes they read)."""
    return [k for k, v in consts.items() if v >= VARY_MIN and k not in pinned and k not in follows
            and not STRUCTURAL.search(_split_key(k)[0])]


# ---- invariants: what a variant must keep -----------------------------------------------------------------------
_OPS: dict[type, Any] = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                         ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
                         ast.Div: lambda a, b: a // b if b and a % b == 0 else None,
                         ast.Pow: lambda a, b: a ** b if 0 <= b < 16 else None}


def _reads(expr: ast.expr) -> list[str] | None:
    """The size keys an expression reads ('n', 'shape[0]'), or None when it does more than integer arithmetic."""
    if isinstance(expr, ast.Constant):
        return [] if _is_int(expr.value) else None
    if isinstance(expr, ast.Name):
        return [expr.id]
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant):
        return [f"{expr.value.id}[{expr.slice.value}]"] if _is_int(expr.slice.value) else None
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPS:
        left, right = _reads(expr.left), _reads(expr.right)
        return None if left is None or right is None else left + right
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _reads(expr.operand)
    return None


def _eval(expr: ast.expr, values: dict[str, int]) -> int | None:
    if isinstance(expr, ast.Constant):
        return int(expr.value)
    if isinstance(expr, (ast.Name, ast.Subscript)):
        return values.get((_reads(expr) or [""])[0])
    if isinstance(expr, ast.BinOp):
        a, b = _eval(expr.left, values), _eval(expr.right, values)
        return None if a is None or b is None else _OPS[type(expr.op)](a, b)
    if isinstance(expr, ast.UnaryOp):
        a = _eval(expr.operand, values)
        return None if a is None else -a
    return None


def derived(mod: ModuleType) -> dict[str, ast.expr]:
    """Sizes the module's source computes from other sizes, key -> expression: `input_shape = (num_classes,)` makes
    input_shape[0] follow num_classes, `bias_shape = (out_features, 1, 1)` makes bias_shape[0] follow out_features.
    A variant changes the sizes they read, and these are computed again from them (settle)."""
    try:
        tree = ast.parse(inspect.getsource(mod))
    except (OSError, TypeError, SyntaxError):
        return {}
    ints = module_ints(mod)
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
        if not isinstance(target, ast.Name):
            continue
        value = node.value
        items = ([(f"{target.id}[{i}]", e) for i, e in enumerate(value.elts)]
                 if isinstance(value, (ast.Tuple, ast.List)) else [(target.id, value)])
        for key, expr in items:
            out.pop(key, None)  # a later assignment replaces an earlier one
            reads = _reads(expr)
            if key in ints and reads and all(r in ints and r != key for r in reads):
                out[key] = expr
    return out


def settle(mod: ModuleType, sizes: dict[str, int], keep: Any = ()) -> dict[str, int]:
    """`sizes` with every derived size computed again from the sizes it reads (those in `keep`, the user's own
    overrides, stay as given). Chains settle in source order."""
    rules = derived(mod)
    if not rules:
        return sizes
    out = dict(sizes)
    for key, expr in rules.items():
        if key in keep or key not in out:
            continue
        value = _eval(expr, {**module_ints(mod), **out})
        if value is not None and value >= 0:
            out[key] = int(value)
    return out


def relations(consts: dict[str, int], keys: list[str]) -> list[tuple[str, str, str]]:
    """What holds among the problem's own sizes, (kind, a, b): 'eq' a == b, 'div' a divides b, 'le' a <= b. Some
    are chance (batch 16 divides dim 4096), so a variant is repaired to keep them only when the reference rejects
    it as it is (repair)."""
    out = []
    for a in keys:
        for b in keys:
            va, vb = consts[a], consts[b]
            if a == b or va < 2 or vb < 2:
                continue
            if va == vb and keys.index(a) < keys.index(b):
                out.append(("eq", a, b))
            elif va < vb and vb % va == 0:
                out.append(("div", a, b))
            elif va < vb:
                out.append(("le", a, b))
    return out


RATIO_MIN = 8  # b = r * a with r >= 8 between two model hyperparameters: a structure (head size, group size)


def ratios(mod: ModuleType, consts: dict[str, int], keys: list[str]) -> dict[str, str]:
    """Structural ratios to keep while shrinking, b -> a: both are sizes the model is built from (get_init_inputs
    reads them), a divides b, and b / a >= 8 (n_embd / n_head = the head size, channels / groups). Halving b then
    halves a too, so the head size stays what the problem has (a shrunk attention with head size 3 tests little)."""
    built = built_from(mod)
    if not built:
        return {}
    # a may be a structural constant the automatic sizes never vary on their own (num_groups): it moves only here.
    partners = [k for k in consts if k in built and consts[k] >= 2]
    out = _module_ratios(mod, consts, keys, partners)  # GroupNorm(num_groups, channels) as the model says
    for b in keys:
        if b not in built or b in out:
            continue
        pairs = [(consts[b] // consts[a], a) for a in partners if a != b and a not in out.values()
                 and consts[b] % consts[a] == 0 and consts[b] // consts[a] >= RATIO_MIN]
        if pairs:  # the smallest ratio: n_embd / n_head (the head size), not max_seqlen / n_head
            out[b] = min(pairs)[1]
    return out


def _module_ratios(mod: ModuleType, consts: dict[str, int], keys: list[str], partners: list[str]) -> dict[str, str]:
    """channels -> groups for each nn.GroupNorm of the model (built on the meta device: nothing allocated)."""
    out: dict[str, str] = {}
    try:
        with torch.device("meta"):
            model = mod.Model(*list(mod.get_init_inputs()))
        norms = [m for m in model.modules() if isinstance(m, torch.nn.GroupNorm)]
    except Exception:  # noqa: BLE001 - a model that cannot be built on meta: the size heuristic alone
        return out
    for gn in norms:
        b = next((k for k in keys if consts[k] == gn.num_channels), None)
        a = next((k for k in partners if consts[k] == gn.num_groups and k != b), None)
        if a and b and gn.num_channels // gn.num_groups >= 2:
            out[b] = a
    return out


def _multiple(of: int, near: int, odd: bool) -> int:
    """The multiple of `of` nearest `near` (at least `of`), odd when asked and possible."""
    k = max(1, round(near / of))
    if odd and of % 2:
        k += (k * of) % 2 == 0
    return k * of


def repair(sizes: dict[str, int], rels: list[tuple[str, str, str]], keep: Any = ()) -> dict[str, int]:
    """`sizes` moved so that every relation of the problem holds again (b follows a; sizes in `keep` never move).
    A variant keeps its intent where it can: an odd size stays odd, a long one long."""
    out = dict(sizes)
    for _ in range(4):
        changed = False
        for kind, a, b in rels:
            if b in keep or a not in out or b not in out or out[a] < 1:
                continue
            va, vb = out[a], out[b]
            new = vb
            if kind == "eq" and va != vb:
                new = va
            elif kind == "div" and vb % va:
                new = _multiple(va, vb, odd=vb % 2 == 1)
            elif kind == "le" and va > vb:
                new = va
            if new != vb:
                out[b], changed = new, True
        if not changed:
            break
    return out


def shrink(mod: ModuleType, start: dict[str, int], vary: list[str], max_elems: int, max_dim: int,
           floor: int = 4, keep: Any = (), keep_ratio: dict[str, str] | None = None) -> dict[str, int]:
    """Halve the largest varied size until inputs + outputs fit `max_elems` and no varied size exceeds `max_dim`;
    a halving the reference rejects (on fake tensors) freezes that constant instead. Ratios stay roughly the same
    because the largest is always halved first, and get_init_inputs is re-read at every step. A structural ratio
    (keep_ratio, b -> a: the head size n_embd / n_head) halves both together; when a cannot halve (n_head 3), b
    stops where it is."""
    cur = dict(start)
    est, ok0 = footprint(mod, cur)
    frozen: set[str] = set()
    if keep_ratio is None:  # read from the sizes shrinking starts at: pass the problem's own when starting lower
        keep_ratio = ratios(mod, start, vary)
    # Each size's own floor: never below `floor`, and never below its multiplicity floor (a head count of 8 stops at
    # 4, not 2 or 1), read from where shrinking starts (the problem's sizes, or a main case that already keeps them).
    least = {k: max(floor, multiplicity_floor(v)) for k, v in start.items()}
    for _ in range(256):
        free = [k for k in vary if k not in frozen and cur[k] > least[k]]
        too_wide = [k for k in free if cur[k] > max_dim]
        n = est if est is not None else math.prod(max(1, cur[k]) for k in vary)
        if not free or (n <= max_elems and not too_wide):
            break
        k = max(too_wide or free, key=lambda name: cur[name])
        step = {k: max(least[k], (cur[k] + 1) // 2)}
        a = keep_ratio.get(k)
        if (a is not None and a not in keep and cur[a] % 2 == 0 and cur[k] % 2 == 0
                and cur[a] // 2 >= multiplicity_floor(start.get(a, cur[a]))):
            step[a] = cur[a] // 2  # b / a (the head size) stays
        elif (a is not None and a not in keep and cur[a] > multiplicity_floor(start.get(a, cur[a]))
              and cur[k] % cur[a] == 0):
            fa = multiplicity_floor(start.get(a, cur[a]))  # n_head 4 -> 3 and n_embd 384 -> 288: head size 96 stays
            step = {k: cur[k] // cur[a] * fa, a: fa}
        elif a is not None:
            # a cannot move with it (n_head 3, or a pinned one): b stays, so the head size is the problem's
            frozen.add(k)
            continue
        trial = settle(mod, {**cur, **step}, keep)
        t_est, t_ok = footprint(mod, trial)
        if ok0 and not t_ok:
            frozen.add(k)  # e.g. embed_dim no longer divisible by num_heads, or smaller than a kernel
            continue
        cur, est = trial, t_est
    return cur


LONG_FROM = 256  # sizes at least this big in the problem get a long_<size> variant
LONG_DIM = 333  # odd, over two blocks of 128 and not a multiple of any power of two


def oddify(sizes: dict[str, int], vary: list[str]) -> dict[str, int]:
    """Every varied size made odd (and so no power of two): 512 -> 511, 16 -> 15."""
    return {**sizes, **{k: sizes[k] - 1 for k in vary if sizes[k] > 2 and sizes[k] % 2 == 0}}

