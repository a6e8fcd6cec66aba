"""Abstract values for the body of one @triton.jit function, and the interpreter that walks it.

The interpreter runs the statements in order over an environment `name -> Val`: both branches of an `if`
are walked and merged, a loop body is walked twice so loop-carried values settle, and `if FLAG:` on a
tl.constexpr flag is decided (one run per value of up to 3 flags), so branches that belong together do not
mix. A Val says what the checks need to know about a value: is it raw loaded data, what do the lanes that
a mask switched off hold, its dtype, whether it came from tl.arange or tl.program_id, which parameters it
depends on. What the walk meets (loads, stores, reductions, exp, dots, accumulations...) is recorded in a
Trace; kernel_checks.py turns the Trace into findings.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from dataclasses import dataclass, field, replace

from .names import canon, dotted, kw, names_in, number, short
from .structure import FileModel, KernelDecl

LOW_PRECISION = {"fp16", "bf16", "input"}
_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int64": "int64",
           "uint64": "int64", "int32": "int32", "int16": "int", "int8": "int", "uint32": "int32", "uint8": "int",
           "int1": "int", "float8e4nv": "fp8", "float8e5": "fp8", "float8e4b15": "fp8"}
_REDUCTIONS = {"max", "min", "sum", "argmax", "argmin", "cumsum", "cumprod", "xor_sum", "reduce", "associative_scan"}
_PASS = {"multiple_of", "max_contiguous", "max_constancy", "reshape", "permute", "trans", "broadcast_to",
         "expand_dims", "view", "ravel", "broadcast", "flip", "interleave", "join", "split"}
# logp, log_probs, log_target, lse, logq; not logit(s), which are unbounded.
_LOG_NAME = re.compile(r"(^|_)(log(?!it)\w*|lse)($|_)", re.I)
_MATH = {"abs": abs, "sigmoid": lambda c: 1 / (1 + math.exp(-c)) if c > -700 else 0.0, "tanh": math.tanh,
         "erf": math.erf, "cos": math.cos, "sin": math.sin, "floor": math.floor, "ceil": math.ceil}


@dataclass(frozen=True)
class Val:
    """What the checks know about one value. Masked-off lanes: `lane` is clean (no masked lanes or they
    hold real data), const (`lane_c`, e.g. the `other=` of a masked load), undef (a masked load without
    `other=`) or garbage (a pad combined with real data, such as `x - mean`)."""

    num: float | None = None  # a compile-time scalar
    lane: str = "clean"
    lane_c: float | None = None
    pads: frozenset = frozenset()  # (masked tl.load or tl.where, axes its mask varies along or None) of the lanes
    raw: bool = False  # loaded data, not shifted by a maximum
    exps: frozenset = frozenset()  # exp calls of raw data this value is made of
    dtype: str | None = None
    dtype_src: ast.AST | None = None  # where the dtype was set (the tl.zeros of an accumulator)
    red: bool = False  # made from a reduction (a norm, a variance)
    eps: bool = False  # has an additive epsilon
    bad_sqrt: frozenset = frozenset()  # sqrt calls of a reduction without epsilon
    arange: bool = False
    tiles: frozenset[str] = frozenset()  # constexpr bounds of the tl.arange it comes from
    vaxes: frozenset[int] = frozenset()  # axes along which it varies (x[:, None] -> 0, x[None, :] -> 1)
    moving: bool = False  # depends on program_id, a loop variable or a runtime argument
    params: frozenset[str] = frozenset()  # runtime (non-pointer, non-constexpr) arguments it depends on
    pid: bool = False  # derived from program_id in int32
    wide: bool = False  # int64
    ovf: ast.BinOp | None = None  # the int32 multiply of a program_id-derived index it contains
    ovf_param: bool = False
    bases: frozenset[str] = frozenset()  # pointer arguments it is an address into
    block_ptr: bool = False
    nonneg: bool = False  # >= 0 everywhere (abs, exp, x * x): 0 is then the identity of max
    unit: frozenset[int] = frozenset()  # axes along which consecutive lanes are consecutive elements
    scaled: frozenset[int] = frozenset()  # axes whose tl.arange is multiplied by a size (H, D, n_cols): lanes far apart


CLEAN = Val()


def pad(node: ast.AST, axes: frozenset[int] | None) -> frozenset:
    return frozenset({(node, axes or None)})


def pad_axes(pads: frozenset) -> frozenset[int] | None:
    """Axes along which the padded lanes lie; None when a mask's axes are unknown."""
    out: set[int] = set()
    for _, axes in pads:
        if axes is None:
            return None
        out |= axes
    return frozenset(out)


@dataclass
class Access:
    node: ast.Call
    kind: str  # load, store, atomic
    ptr: Val
    mask: ast.expr | None
    other: ast.expr | None
    boundary: bool
    guarded: bool
    value: Val | None = None


@dataclass
class Trace:
    """Everything the walk of one kernel met, for the checks."""

    accesses: list[Access] = field(default_factory=list)
    reductions: list[tuple[ast.Call, str, Val, int | None, bool]] = field(default_factory=list)
    exp_uses: list[tuple[ast.Call, ast.Call]] = field(default_factory=list)  # (exp call, consuming sum)
    bad_norms: list[tuple[ast.Call, ast.AST]] = field(default_factory=list)  # (sqrt/rsqrt, divide or itself)
    accums: list[tuple[str, Val, ast.stmt]] = field(default_factory=list)
    dots: list[tuple[ast.Call, Val, Val, str | None]] = field(default_factory=list)
    aranges: list[ast.Call] = field(default_factory=list)
    axes: set[int] = field(default_factory=set)
    tiled: dict[str, set[str]] = field(default_factory=dict)  # constexpr block -> sizes it tiles
    strided: set[str] = field(default_factory=set)  # blocks multiplied by program_id or stepped by a loop
    shape_constexprs: set[str] = field(default_factory=set)  # constexprs used as tile shapes
    ovf_side: dict[int, int] = field(default_factory=dict)  # id(multiply) -> 0 when the left side is program_id


def promote(a: str | None, b: str | None) -> str | None:
    """The dtype of `a op b` as far as the checks care: fp32 wins, a known float beats an int or unknown."""
    if a == b:
        return a
    for wide in ("fp64", "fp32"):
        if wide in (a, b):
            return wide
    if _is_int(a) and not _is_int(b):
        return b
    if _is_int(b) and not _is_int(a):
        return a
    return a or b


def _is_int(d: str | None) -> bool:
    return d is not None and d.startswith("int")


def _first_ovf(a: Val, b: Val) -> tuple[ast.BinOp | None, bool]:
    if a.ovf is not None and (a.ovf_param or not b.ovf_param or b.ovf is None):
        return a.ovf, a.ovf_param
    return b.ovf, b.ovf_param


def _index_join(a: Val, b: Val) -> dict:
    """The fields that any combination of two values keeps: dependencies and address information."""
    wide = a.wide or b.wide
    ovf, ovf_param = _first_ovf(a, b)
    return dict(arange=a.arange or b.arange, tiles=a.tiles | b.tiles, vaxes=a.vaxes | b.vaxes,
                unit=a.unit | b.unit, scaled=a.scaled | b.scaled,
                moving=a.moving or b.moving, params=a.params | b.params, pid=(a.pid or b.pid) and not wide,
                wide=wide, ovf=ovf, ovf_param=ovf_param, red=a.red or b.red, exps=a.exps | b.exps,
                dtype=promote(a.dtype, b.dtype), dtype_src=a.dtype_src or b.dtype_src,
                bad_sqrt=a.bad_sqrt | b.bad_sqrt)


def _lane_join(a: Val, b: Val) -> dict:
    """Control-flow merge of the masked lanes: the worse of the two."""
    rank = {"clean": 0, "const": 1, "garbage": 2, "undef": 3}
    if a.lane == b.lane == "const" and not _same(a.lane_c, b.lane_c):
        return dict(lane="garbage", lane_c=None, pads=a.pads | b.pads)
    w = a if rank[a.lane] >= rank[b.lane] else b
    return dict(lane=w.lane, lane_c=w.lane_c, pads=a.pads | b.pads)


def _same(x: float | None, y: float | None) -> bool:
    return x == y or (x is not None and y is not None and math.isnan(x) and math.isnan(y))


def merge(a: Val, b: Val) -> Val:
    """The value of a variable after an if/else or a loop, when the branches assigned it differently."""
    if a is b:
        return a
    return Val(num=a.num if a.num == b.num else None, raw=a.raw or b.raw, eps=a.eps and b.eps,
               bases=a.bases | b.bases, block_ptr=a.block_ptr or b.block_ptr,
               **{**_index_join(a, b), "dtype": a.dtype if a.dtype == b.dtype else promote(a.dtype, b.dtype),
                  "wide": a.wide and b.wide, "pid": (a.pid or b.pid) and not (a.wide and b.wide)},
               **_lane_join(a, b))


def merge_env(a: dict[str, Val], b: dict[str, Val]) -> dict[str, Val]:
    out = dict(a)
    for k, v in b.items():
        out[k] = merge(a[k], v) if k in a else v
    return out


def _arith(op: ast.operator, x: float, y: float) -> float:
    try:
        if isinstance(op, ast.Add):
            return x + y
        if isinstance(op, ast.Sub):
            return x - y
        if isinstance(op, ast.Mult):
            return x * y
        if isinstance(op, (ast.Div, ast.FloorDiv)):
            if y == 0:
                return math.nan if x == 0 else math.copysign(math.inf, x)
            return x / y
    except (OverflowError, ValueError):
        return math.nan
    return math.nan


def _lane_binop(op: ast.operator, a: Val, b: Val) -> dict:
    """What masked lanes hold after `a op b`; a pad only matters when it came from a masked load or fill."""
    pads = a.pads | b.pads
    kinds = (a.lane, b.lane)
    if isinstance(op, ast.Mult):  # x_hat * (w * dy) with dy loaded other=0: the product is 0 on the padded lanes
        for z, o in ((a, b), (b, a)):
            if z.lane == "const" and z.lane_c == 0 and z.pads and o.lane == "garbage" and _covers(z.pads, o.pads):
                return dict(lane="const", lane_c=0.0, pads=z.pads)
    if "undef" in kinds:
        return dict(lane="undef", pads=pads)
    if "garbage" in kinds:
        return dict(lane="garbage", pads=pads)
    if kinds == ("clean", "clean"):
        return {}
    ca = a.lane_c if a.lane == "const" else a.num
    cb = b.lane_c if b.lane == "const" else b.num
    if ca is not None and cb is not None:
        return dict(lane="const", lane_c=_arith(op, ca, cb), pads=pads)
    c, pad_left = (ca, True) if a.lane == "const" else (cb, False)
    if not (a if pad_left else b).pads:
        return {}  # a uniform fill (tl.zeros) combined with real data: no lane was masked off
    if isinstance(op, ast.Mult) and (c == 0 or math.isinf(c)):
        return dict(lane="const", lane_c=c, pads=pads)
    # A fill of +-1e4 or more (tl.where(causal, s, -1.0e6)) stands for +-inf: adding finite data keeps it one.
    if isinstance(op, (ast.Add, ast.Sub)) and (math.isinf(c) or abs(c) >= 1e4):
        return dict(lane="const", lane_c=c if pad_left or isinstance(op, ast.Add) else -c, pads=pads)
    if isinstance(op, ast.Div) and pad_left and (c == 0 or math.isinf(c)):
        return dict(lane="const", lane_c=c, pads=pads)
    if isinstance(op, ast.Div) and not pad_left and math.isinf(c):
        return dict(lane="const", lane_c=0.0, pads=pads)
    return dict(lane="garbage", pads=pads)


def _covers(zero: frozenset, other: frozenset) -> bool:
    """The zero padding lies along every axis the other operand's padding does (unknown axes count as covering)."""
    za, oa = pad_axes(zero), pad_axes(other)
    return za is None or oa is None or oa <= za


def _accumulates(name: str, value: ast.expr) -> bool:
    """`acc = acc + x`, `acc = x + acc * alpha`, `acc = tl.dot(a, b, acc)`: the variable is summed into."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        return any(name in names_in(side) and not isinstance(side, ast.Call) for side in (value.left, value.right))
    if isinstance(value, ast.Call) and short(dotted(value.func)) == "dot":
        acc = kw(value, "acc", 2)
        return isinstance(acc, ast.Name) and acc.id == name
    return False


def _is_eps(v: Val, node: ast.AST) -> bool:
    """An epsilon term: a positive literal or a name that says eps."""
    if v.num is not None:
        return v.num != 0
    return any("eps" in n.lower() for n in names_in(node))


def _remap_axes(axes: frozenset[int] | None, sl: ast.expr) -> frozenset[int] | None:
    """x[:, None] keeps axis 0; x[None, :] moves axis 0 to 1."""
    if axes is None:
        return None
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    if not all(isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is None) for e in elts):
        return axes
    kept = [i for i, e in enumerate(elts) if isinstance(e, ast.Slice)]
    return frozenset(kept[a] for a in axes if a < len(kept))


class KernelInterpreter:
    """Walks one @triton.jit function and fills a Trace."""

    MAX_FLAGS = 3

    def __init__(self, model: FileModel, decl: KernelDecl, param_dtypes: dict[str, str] | None = None):
        self.m, self.k = model, decl
        self.param_dtypes = param_dtypes or {}
        self.trace = Trace()
        self.loop_depth = 0
        self.guards: list[ast.If] = []
        self.assume: dict[str, bool] = {}
        self.guard_names = decl.constexprs | set(model.consts)
        self._locals: dict[str, list[ast.expr]] = {}  # local name -> the expressions assigned to it
        self.stride_params = _stride_params(model, decl)
        for n in ast.walk(decl.node):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        self._locals.setdefault(t.id, []).append(n.value)

    # ---- driver ---------------------------------------------------------------------------------
    def run(self) -> Trace:
        flags: list[str] = []
        for n in ast.walk(self.k.node):
            if isinstance(n, (ast.If, ast.IfExp)):
                name = self._flag(n.test)
                if name and name not in flags:
                    flags.append(name)
        flags = flags[:self.MAX_FLAGS]
        for values in itertools.product([True, False], repeat=len(flags)):
            self.assume = dict(zip(flags, values))
            self._block(self.k.node.body, self._initial_env())
        return self.trace

    def _flag(self, test: ast.expr) -> str | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        return test.id if isinstance(test, ast.Name) and test.id in self.k.constexprs else None

    def _pointer_params(self) -> set[str]:
        """Parameters that are the base of a load/store address (`X + row * stride`), whatever their name."""
        local: dict[str, ast.expr] = {}
        for n in ast.walk(self.k.node):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                local.setdefault(n.targets[0].id, n.value)

        def root(e: ast.expr | None, depth: int = 0) -> str | None:
            while isinstance(e, (ast.BinOp, ast.Subscript)) and depth < 20:
                e = e.left if isinstance(e, ast.BinOp) else e.value
                depth += 1
            if isinstance(e, ast.Call) and short(dotted(e.func)) == "make_block_ptr":
                return root(kw(e, "base", 0), depth + 1)
            if isinstance(e, ast.Name):
                if e.id in self.k.params:
                    return e.id
                if e.id in local and depth < 20:
                    return root(local[e.id], depth + 1)
            return None

        out = set()
        for n in ast.walk(self.k.node):
            if isinstance(n, ast.Call) and short(dotted(n.func)) in ("load", "store") or \
                    isinstance(n, ast.Call) and short(dotted(n.func)).startswith("atomic_"):
                r = root(kw(n, "pointer", 0))
                if r:
                    out.add(r)
        return out

    def _block_ptr_params(self) -> set[str]:
        """Parameters that are block pointers: named so, or moved with tl.advance."""
        out = {p for p in self.k.params if "block_ptr" in p.lower()}
        for n in ast.walk(self.k.node):
            if isinstance(n, ast.Call) and short(dotted(n.func)) == "advance" and n.args and \
                    isinstance(n.args[0], ast.Name) and n.args[0].id in self.k.params:
                out.add(n.args[0].id)
        return out - self.k.constexprs

    def _initial_env(self) -> dict[str, Val]:
        env: dict[str, Val] = {}
        pointers = self._pointer_params()
        block_ptrs = self._block_ptr_params()
        for p in self.k.params:
            if p in self.k.constexprs:
                env[p] = Val()
            elif p in block_ptrs:  # a helper handed a tl.make_block_ptr by its caller kernel
                env[p] = Val(bases=frozenset({p}), block_ptr=True, dtype=self.param_dtypes.get(p))
            elif p.lower().endswith(("ptr", "_desc", "desc")) or p in pointers:
                env[p] = Val(bases=frozenset({p}), dtype=self.param_dtypes.get(p))
            else:
                env[p] = Val(params=frozenset({p}), moving=True)
        return env

    # ---- statements -----------------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], env: dict[str, Val]) -> None:
        for s in stmts:
            self._stmt(s, env)

    def _stmt(self, s: ast.stmt, env: dict[str, Val]) -> None:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is None:
                return
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                if isinstance(t, ast.Name) and self.loop_depth and t.id in env and _accumulates(t.id, s.value):
                    self.trace.accums.append((t.id, env[t.id], s))
            value = self.eval(s.value, env)
            for t in targets:
                self._assign(t, s.value, value, env)
        elif isinstance(s, ast.AugAssign):
            old = self.eval(s.target, env)
            new = self._binop(s.op, old, self.eval(s.value, env), s, s.target, s.value)
            if isinstance(s.target, ast.Name):
                if self.loop_depth and isinstance(s.op, (ast.Add, ast.Sub)):
                    self.trace.accums.append((s.target.id, old, s))
                env[s.target.id] = new
        elif isinstance(s, ast.Expr):
            self.eval(s.value, env)
        elif isinstance(s, ast.If):
            name = self._flag(s.test)
            if name in self.assume:
                negate = isinstance(s.test, ast.UnaryOp)
                self._guarded(s, s.body if self.assume[name] != negate else s.orelse, env)
                return
            self.eval(s.test, env)
            e_true, e_false = dict(env), dict(env)
            self._guarded(s, s.body, e_true)
            self._guarded(s, s.orelse, e_false)
            env.clear()
            env.update(merge_env(e_true, e_false))
        elif isinstance(s, ast.For):
            loop_var = self._loop_var(s.iter, env)
            self._loop(s.body, env, s.target, loop_var)
        elif isinstance(s, ast.While):
            self.eval(s.test, env)
            self._loop(s.body, env, None, None)
        elif isinstance(s, ast.With):
            self._block(s.body, env)
        elif isinstance(s, ast.Return) and s.value is not None:
            self.eval(s.value, env)

    def _guarded(self, s: ast.If, body: list[ast.stmt], env: dict[str, Val]) -> None:
        guard = bool(names_in(s.test) & self.guard_names)
        if guard:
            self.guards.append(s)
        self._block(body, env)
        if guard:
            self.guards.pop()

    def _assign(self, target: ast.expr, node: ast.expr, value: Val, env: dict[str, Val]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == len(target.elts):
                for t, e in zip(target.elts, node.elts):
                    self._assign(t, e, self.eval(e, env), env)
            else:
                for t in target.elts:
                    self._assign(t, node, replace(value, raw=False, exps=frozenset()), env)

    def _loop_var(self, it: ast.expr, env: dict[str, Val]) -> Val:
        args = [self.eval(a, env) for a in it.args] if isinstance(it, ast.Call) else [self.eval(it, env)]
        if isinstance(it, ast.Call) and short(dotted(it.func)) in ("range", "static_range") and len(it.args) >= 3:
            step = it.args[2]
            if isinstance(step, ast.Name) and step.id in self.k.constexprs:
                self.trace.tiled.setdefault(step.id, set()).update(args[1].params)
                self.trace.strided.add(step.id)
        v = CLEAN
        for a in args:
            v = Val(**{**_index_join(v, a), "red": False, "exps": frozenset(), "dtype": "int", "bad_sqrt": frozenset()})
        return replace(v, moving=True, arange=False, tiles=frozenset(), vaxes=frozenset())

    def _loop(self, body: list[ast.stmt], env: dict[str, Val], target: ast.expr | None, loop_var: Val | None) -> None:
        self.loop_depth += 1
        first = dict(env)
        if target is not None and loop_var is not None:
            self._assign(target, target, loop_var, first)
        self._block(body, first)
        second = merge_env(env, first)
        if target is not None and loop_var is not None:
            self._assign(target, target, loop_var, second)
        self._block(body, second)
        self.loop_depth -= 1
        merged = merge_env(env, second)
        env.clear()
        env.update(merged)

    # ---- expressions ----------------------------------------------------------------------------
    def eval(self, e: ast.expr | None, env: dict[str, Val]) -> Val:
        if e is None:
            return CLEAN
        if isinstance(e, ast.Constant):
            if isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
                return Val(num=float(e.value), dtype="int" if isinstance(e.value, int) else None)
            return CLEAN
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            if e.id in self.m.consts:
                return Val(num=self.m.consts[e.id])
            return CLEAN
        if isinstance(e, ast.Attribute):
            if canon(e, self.m.aliases) in ("math.inf",):
                return Val(num=math.inf)
            return self.eval(e.value, env) if isinstance(e.value, ast.Name) and e.value.id in env else CLEAN
        if isinstance(e, ast.Subscript):
            v = self.eval(e.value, env)
            return replace(v, vaxes=_remap_axes(v.vaxes, e.slice) or frozenset(),
                           unit=_remap_axes(v.unit, e.slice) or frozenset(),
                           scaled=_remap_axes(v.scaled, e.slice) or frozenset(),
                           pads=frozenset((n, _remap_axes(ax, e.slice)) for n, ax in v.pads))
        if isinstance(e, ast.BinOp):
            return self._binop(e.op, self.eval(e.left, env), self.eval(e.right, env), e, e.left, e.right)
        if isinstance(e, ast.UnaryOp):
            v = self.eval(e.operand, env)
            if isinstance(e.op, ast.USub):
                lane = dict(lane_c=-v.lane_c) if v.lane == "const" and v.lane_c is not None else {}
                return replace(v, num=None if v.num is None else -v.num, raw=False, **lane)
            return replace(v, raw=False, num=None)
        if isinstance(e, ast.Compare):
            vals = [self.eval(e.left, env)] + [self.eval(c, env) for c in e.comparators]
            for a, b in zip(vals, vals[1:]):
                for tiles, other in ((a.tiles, b), (b.tiles, a)):
                    for t in tiles:
                        self.trace.tiled.setdefault(t, set()).update(other.params)
            out = CLEAN
            for v in vals:
                out = Val(**{**_index_join(out, v), "dtype": "int", "red": False, "exps": frozenset()})
            return out
        if isinstance(e, ast.BoolOp):
            out = CLEAN
            for v in e.values:
                out = Val(**_index_join(out, self.eval(v, env)))
            return out
        if isinstance(e, ast.IfExp):
            name = self._flag(e.test)
            if name in self.assume:
                take = self.assume[name] != isinstance(e.test, ast.UnaryOp)
                return self.eval(e.body if take else e.orelse, env)
            self.eval(e.test, env)
            return merge(self.eval(e.body, env), self.eval(e.orelse, env))
        if isinstance(e, (ast.Tuple, ast.List)):
            out = CLEAN
            for x in e.elts:
                out = Val(**_index_join(out, self.eval(x, env)))
            return out
        if isinstance(e, ast.Call):
            return self._call(e, env)
        return CLEAN

    def _binop(self, op: ast.operator, a: Val, b: Val, node: ast.AST, ln: ast.expr, rn: ast.expr) -> Val:
        j = _index_join(a, b)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return Val(**{**j, "dtype": "int", "red": False, "exps": frozenset()})
        if isinstance(op, ast.Mult):
            for side, (idx, other, on) in enumerate(((a, b, rn), (b, a, ln))):
                if idx.pid and not idx.wide and other.num is None and not other.wide and isinstance(node, ast.BinOp):
                    if j["ovf"] is None or (other.params and not j["ovf_param"]):
                        j["ovf"], j["ovf_param"] = node, bool(other.params)
                        self.trace.ovf_side[id(node)] = side
                    if isinstance(on, ast.Name) and on.id in self.k.constexprs:
                        self.trace.strided.add(on.id)
        if isinstance(op, ast.Mult):
            j["unit"], j["scaled"] = self._stride_axes(a, b, ln, rn)
        elif isinstance(op, ast.Mod) or (isinstance(op, ast.FloorDiv) and b.num is not None and abs(b.num) <= 8):
            pass  # rm % M wraps, arange // 2 pairs lanes: neighbours stay (nearly) neighbours
        elif not isinstance(op, (ast.Add, ast.Sub)):
            j["unit"], j["scaled"] = frozenset(), frozenset()  # x // n, x << k: not an affine address any more
        if isinstance(op, ast.Div) and b.bad_sqrt:
            for s in b.bad_sqrt:
                self.trace.bad_norms.append((s, node))
            j["bad_sqrt"] = a.bad_sqrt
        num = _arith(op, a.num, b.num) if a.num is not None and b.num is not None else None
        raw = a.raw or b.raw
        if isinstance(op, ast.Sub) and (b.num is None or not a.raw):
            raw = False  # x - max(x), x - m[:, None]: shifted
        if isinstance(op, (ast.Mod, ast.FloorDiv, ast.Pow, ast.LShift, ast.RShift)):
            raw = False
        eps = a.eps or b.eps or (isinstance(op, ast.Add) and (_is_eps(a, ln) or _is_eps(b, rn)))
        bases = a.bases | b.bases if isinstance(op, ast.Add) else (a.bases if isinstance(op, ast.Sub) else frozenset())
        nonneg = (isinstance(op, ast.Mult) and (ast.dump(ln) == ast.dump(rn) or (a.nonneg and b.nonneg))) or \
            (isinstance(op, ast.Add) and a.nonneg and b.nonneg)
        return Val(num=num, raw=raw, eps=eps, bases=bases, block_ptr=False, nonneg=nonneg, **j,
                   **_lane_binop(op, a, b))

    def _stride_axes(self, a: Val, b: Val, ln: ast.expr, rn: ast.expr) -> tuple[frozenset, frozenset]:
        """Axes of `a * b` that stay unit-stride, and axes whose lanes a size multiplier moves apart."""
        unit, scaled = a.unit | b.unit, a.scaled | b.scaled
        for idx, other, node in ((a, b, rn), (b, a, ln)):
            if not idx.unit or other.unit or other.scaled:
                continue
            if other.num == 1:
                continue
            names = names_in(node)
            # A stride argument may well be 1 at run time; a size (H, D, n_cols) or a literal > 1 is not.
            if other.num is not None or (names and not any("stride" in n.lower() or n in self.stride_params
                                                           for n in names)
                                         and not other.bases and not other.arange):
                unit, scaled = unit - idx.unit, scaled | idx.unit
        return unit, scaled  # times a stride argument: counted as unit (it is 1 for the contiguous dimension)

    # ---- calls ----------------------------------------------------------------------------------
    def _call(self, node: ast.Call, env: dict[str, Val]) -> Val:
        literal = number(node)
        if literal is not None:
            return Val(num=literal)
        name = canon(node.func, self.m.aliases)
        f = node.func
        is_method = isinstance(f, ast.Attribute) and not self._module_ref(f.value)
        s = short(name)
        if is_method:
            base = self.eval(f.value, env)
            return self._method(node, s, base, env)
        if name.startswith(("tl.", "libdevice.")) or name in ("min", "max", "float", "int"):
            return self._tl(node, s, env)
        vals = [self.eval(a, env) for a in node.args] + [self.eval(k.value, env) for k in node.keywords]
        out = CLEAN
        for v in vals:
            out = Val(**{**_index_join(out, v), "exps": frozenset(), "red": False, "bad_sqrt": frozenset()})
        return out

    def _bounds_test(self, cond: ast.expr | None, depth: int = 0) -> bool:
        """The condition compares with a runtime size argument (offs < n, mask = cols < n_cols): a bounds mask."""
        if cond is None or depth > 4:
            return False
        sizes = set(self.k.params)  # a runtime n or a constexpr D: either bounds the padded lanes
        for n in ast.walk(cond):
            if isinstance(n, ast.Compare) and names_in(n) & sizes:
                return True
            if isinstance(n, ast.Name) and n.id in self._locals and \
                    any(self._bounds_test(v, depth + 1) for v in self._locals[n.id]):
                return True
        return False

    def _log_space(self, arg: ast.expr | None) -> bool:
        """The exp's argument is named as a log-probability (logp, log_probs, lse), or a `log_target`-style
        constexpr flag chose this branch: values <= 0, not logits."""
        names = names_in(arg) if arg is not None else set()
        if any(_LOG_NAME.search(n) for n in names):
            return True
        return any(v and _LOG_NAME.search(f) for f, v in self.assume.items())

    def _module_ref(self, e: ast.expr) -> bool:
        """`tl`, `tl.math`, `tl.extra.cuda.libdevice`: a module, not a value whose method is called."""
        while isinstance(e, ast.Attribute):
            e = e.value
        return isinstance(e, ast.Name) and e.id not in self.k.params and (
            e.id in self.m.aliases or e.id in ("tl", "triton", "math", "libdevice"))

    def _arg(self, node: ast.Call, name: str, pos: int, env: dict[str, Val]) -> tuple[ast.expr | None, Val]:
        a = kw(node, name, pos)
        return a, self.eval(a, env)

    def _method(self, node: ast.Call, s: str, base: Val, env: dict[str, Val]) -> Val:
        if s == "to":
            dt_node = kw(node, "dtype", 0)
            for a in node.args[1:]:
                self.eval(a, env)
            return self._cast(base, dt_node, node, env)
        if s in _REDUCTIONS:
            axis = kw(node, "axis", 0)
            return self._reduce(node, s, base, axis, kw(node, "dtype") is not None)
        if s in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt"):
            return self._unary_math(node, s, base)
        if s == "abs":
            return replace(base, nonneg=True, num=None,
                           **({"lane_c": abs(base.lane_c)} if base.lane == "const" and base.lane_c is not None else {}))
        for a in node.args:
            self.eval(a, env)
        return base

    def _cast(self, v: Val, dt_node: ast.expr | None, node: ast.Call, env: dict[str, Val]) -> Val:
        dt = self.dtype_of(dt_node, env)
        if dt is None:
            return v
        wide = dt == "int64" or (v.wide and dt not in ("int32", "int"))
        # Widened before the address arithmetic: what came before were tile indices, not element offsets.
        ovf = dict(ovf=None, ovf_param=False) if dt == "int64" else {}
        return replace(v, dtype=dt, dtype_src=node, wide=wide, pid=v.pid and not wide, **ovf)

    def dtype_of(self, node: ast.expr | None, env: dict[str, Val]) -> str | None:
        """'fp16', 'bf16', 'fp32', 'int64'...; 'input' for an argument's element type; None when unknown."""
        if node is None:
            return None
        text = canon(node, self.m.aliases)
        if text.startswith("tl.") and short(text) in _DTYPES:
            return _DTYPES[short(text)]
        if isinstance(node, ast.Attribute) and node.attr in ("element_ty", "dtype"):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name):
                if root.id in self.param_dtypes:
                    return self.param_dtypes[root.id]
                v = env.get(root.id)
                if v is not None and v.dtype and not v.bases:
                    return v.dtype
                if v is not None and (v.bases or v.raw):
                    return "input"
        return None

    def _reduce(self, node: ast.Call, kind: str, arg: Val, axis_node: ast.expr | None, has_dtype: bool) -> Val:
        axis = int(axis_node.value) if isinstance(axis_node, ast.Constant) and isinstance(axis_node.value, int) \
            else None
        self.trace.reductions.append((node, kind, arg, axis, has_dtype))
        if kind in ("sum", "cumsum"):
            for e in arg.exps:
                self.trace.exp_uses.append((e, node))
        dtype = arg.dtype
        if has_dtype:
            dtype = self.dtype_of(kw(node, "dtype"), {}) or dtype
        keep = kind in ("cumsum", "cumprod")
        return Val(red=True, dtype=dtype, dtype_src=arg.dtype_src, moving=arg.moving, params=arg.params,
                   pid=arg.pid, wide=arg.wide, exps=arg.exps if keep else frozenset(),
                   **(_lane_binop(ast.Add(), arg, Val(num=0.0)) if keep else {}))

    def _unary_math(self, node: ast.Call, s: str, arg: Val) -> Val:
        lane: dict = {}
        if arg.lane == "const" and arg.lane_c is not None:
            c = arg.lane_c
            try:
                lane_c = {"exp": lambda: math.exp(min(c, 709.0)) if c < 709 else math.inf,
                          "exp2": lambda: 2.0 ** c if c < 1023 else math.inf,
                          "log": lambda: math.log(c) if c > 0 else (-math.inf if c == 0 else math.nan),
                          "log2": lambda: math.log2(c) if c > 0 else (-math.inf if c == 0 else math.nan),
                          "sqrt": lambda: math.sqrt(c) if c >= 0 else math.nan,
                          "rsqrt": lambda: 1 / math.sqrt(c) if c > 0 else (math.inf if c == 0 else math.nan)}[s]()
            except (OverflowError, ValueError):
                lane_c = math.nan
            lane = dict(lane_c=lane_c)
        out = replace(arg, raw=False, num=None, nonneg=s in ("exp", "exp2", "sqrt", "rsqrt"), **lane)
        if s in ("exp", "exp2"):
            out = replace(out, exps=arg.exps | ({node} if arg.raw else frozenset()))
        if s == "rsqrt" and arg.red and not arg.eps:
            self.trace.bad_norms.append((node, node))
        if s == "sqrt" and arg.red and not arg.eps:
            out = replace(out, bad_sqrt=arg.bad_sqrt | {node})
        return out

    def _tl(self, node: ast.Call, s: str, env: dict[str, Val]) -> Val:  # noqa: C901 - one dispatch table
        args = node.args
        if s == "arange":
            self.trace.aranges.append(node)
            tiles = frozenset(a.id for a in args if isinstance(a, ast.Name) and a.id in self.k.constexprs)
            self.trace.shape_constexprs |= tiles
            return Val(arange=True, tiles=tiles, vaxes=frozenset({0}), unit=frozenset({0}), dtype="int32")
        if s in ("program_id", "num_programs"):
            axis = kw(node, "axis", 0)
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int):
                self.trace.axes.add(axis.value)
            return Val(pid=True, moving=True, dtype="int32")
        if s == "load":
            return self._load(node, env)
        if s == "store" or s.startswith("atomic_"):
            ptr = self.eval(kw(node, "pointer", 0), env)
            value = self.eval(kw(node, "value" if s == "store" else "val", 1), env)
            mask = kw(node, "mask", 2)
            self.eval(mask, env)
            bc = kw(node, "boundary_check", 3) if s == "store" else None
            self.trace.accesses.append(Access(node, "store" if s == "store" else s, ptr, mask, None, bc is not None,
                                              bool(self.guards), value))
            return CLEAN
        if s in ("zeros", "full", "zeros_like", "full_like", "empty"):
            return self._alloc(node, s, env)
        if s == "where":
            cond, a, b = (self.eval(x, env) for x in (kw(node, "condition", 0), kw(node, "x", 1), kw(node, "y", 2)))
            j = _index_join(a, b)
            j.update(tiles=j["tiles"] | cond.tiles, params=j["params"] | cond.params, moving=j["moving"] or cond.moving)
            if b.num is not None and b.lane == "clean" and self._bounds_test(kw(node, "condition", 0)):
                # tl.where(mask, x, c) with mask = offs < n: the padded lanes now hold c. A structural select
                # (causal offs_m >= offs_n, o_i < i in a triangular solve) makes no padding.
                lane = dict(lane="const", lane_c=b.num, pads=pad(node, cond.vaxes))
            elif b.num is not None and b.lane == "clean":
                lane = dict(lane=a.lane, lane_c=a.lane_c, pads=a.pads)
            else:
                lane = _lane_join(a, b)
            return Val(raw=a.raw or b.raw, num=None, bases=a.bases | b.bases, eps=a.eps and b.eps, **j, **lane)
        if s in _REDUCTIONS:
            return self._reduce(node, s, self.eval(kw(node, "input", 0), env), kw(node, "axis", 1),
                                kw(node, "dtype") is not None)
        if s in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "fast_expf", "fast_exp2f"):
            base = {"sqrt_rn": "sqrt", "fast_expf": "exp", "fast_exp2f": "exp2"}.get(s, s)
            arg = self.eval(args[0] if args else None, env)
            if base in ("exp", "exp2") and arg.raw and self._log_space(args[0] if args else None):
                arg = replace(arg, raw=False)  # exp of a log-probability (<= 0): it cannot overflow
            return self._unary_math(node, base, arg)
        if s == "dot":
            return self._dot(node, env)
        if s in ("maximum", "minimum", "max", "min") and len(args) >= 2:
            vals = [self.eval(a, env) for a in args]
            a, b = vals[0], vals[1]
            j = _index_join(a, b)
            is_max = s in ("maximum", "max")
            ident = -math.inf if is_max else math.inf
            ca = a.lane_c if a.lane == "const" else a.num
            cb = b.lane_c if b.lane == "const" else b.num
            if a.lane == b.lane == "clean":
                lane: dict = {}
            elif ca is not None and cb is not None:
                lane = dict(lane="const", lane_c=max(ca, cb) if is_max else min(ca, cb), pads=a.pads | b.pads)
            elif (a.lane == "const" and ca == ident and b.lane == "clean") or \
                    (b.lane == "const" and cb == ident and a.lane == "clean"):
                lane = {}
            else:
                lane = _lane_binop(ast.Add(), a, b)
            eps = a.eps or b.eps or (is_max and any(_is_eps(v, n) and (v.num is None or v.num > 0)
                                                    for v, n in zip(vals, args)))
            return Val(raw=a.raw or b.raw, eps=eps, num=None, **j, **lane)
        if s == "cdiv" and len(args) == 2:
            a, b = self.eval(args[0], env), self.eval(args[1], env)
            if isinstance(args[1], ast.Name) and args[1].id in self.k.constexprs:
                self.trace.tiled.setdefault(args[1].id, set()).update(a.params)
            return Val(**{**_index_join(a, b), "dtype": "int32"})
        if s == "cast":
            return self._cast(self.eval(args[0] if args else None, env), kw(node, "dtype", 1), node, env)
        if s == "make_block_ptr":
            base = self.eval(kw(node, "base", 0), env)
            for k in ("shape", "strides", "offsets"):
                self.eval(kw(node, k), env)
            offs = self.eval(kw(node, "offsets", 3), env)
            return Val(block_ptr=True, bases=base.bases, moving=offs.moving, pid=offs.pid, params=offs.params)
        if s == "advance":
            bp = self.eval(args[0] if args else None, env)
            self.eval(args[1] if len(args) > 1 else None, env)
            return replace(bp, moving=True, block_ptr=True)
        if s in _PASS:
            v = self.eval(args[0] if args else None, env)
            for a in args[1:]:
                self.eval(a, env)
            return v
        if s in _MATH or s in ("fma", "clamp", "umulhi", "div_rn", "fdiv", "erf", "tanh"):
            vals = [self.eval(a, env) for a in args]
            v = vals[0] if vals else CLEAN
            fn = _MATH.get(s)
            if v.lane == "const" and v.lane_c is not None and fn is not None and len(vals) == 1:
                try:
                    return replace(v, raw=v.raw and s == "abs", lane_c=float(fn(v.lane_c)), num=None,
                                   nonneg=s == "abs")
                except (OverflowError, ValueError):
                    return replace(v, lane="garbage", lane_c=None, num=None)
            out = v
            for w in vals[1:]:
                out = Val(**_index_join(out, w), raw=out.raw, **_lane_binop(ast.Mult(), out, w))
            return replace(out, raw=out.raw and s == "abs", num=None, nonneg=s == "abs")
        vals = [self.eval(a, env) for a in args] + [self.eval(k.value, env) for k in node.keywords]
        out = CLEAN
        for v in vals:
            out = Val(**{**_index_join(out, v), "red": False, "exps": frozenset(), "bad_sqrt": frozenset()})
        return out

    def _load(self, node: ast.Call, env: dict[str, Val]) -> Val:
        ptr = self.eval(kw(node, "pointer", 0), env)
        mask, mval = self._arg(node, "mask", 1, env)
        other, oval = self._arg(node, "other", 2, env)
        bc = kw(node, "boundary_check", 3)
        padding = kw(node, "padding_option", 4)
        self.trace.accesses.append(Access(node, "load", ptr, mask, other, bc is not None, bool(self.guards)))
        dtype = next((self.param_dtypes[b] for b in ptr.bases if b in self.param_dtypes), None)
        out = Val(raw=True, dtype=dtype, dtype_src=node)
        if mask is not None:
            if other is None:
                return replace(out, lane="undef", pads=pad(node, mval.vaxes))
            if oval.num is not None:
                return replace(out, lane="const", lane_c=oval.num, pads=pad(node, mval.vaxes))
            return out
        if ptr.block_ptr and bc is not None:
            p = padding.value if isinstance(padding, ast.Constant) else ""
            if isinstance(padding, ast.Attribute):
                p = padding.attr.lower()
            lane = {"zero": dict(lane="const", lane_c=0.0), "nan": dict(lane="const", lane_c=math.nan)}.get(
                str(p).lower(), dict(lane="undef"))
            return replace(out, pads=pad(node, None), **lane)
        return out

    def _alloc(self, node: ast.Call, s: str, env: dict[str, Val]) -> Val:
        shape = kw(node, "shape", 0)
        if shape is not None:
            self.trace.shape_constexprs |= names_in(shape) & self.k.constexprs
        if s in ("zeros_like", "full_like"):
            like = self.eval(node.args[0] if node.args else None, env)
            dt = self.dtype_of(kw(node, "dtype"), env) or like.dtype
            value = self.eval(kw(node, "fill_value", 1), env) if s == "full_like" else Val(num=0.0)
        else:
            dt = self.dtype_of(kw(node, "dtype", 2 if s == "full" else 1), env)
            value = self.eval(kw(node, "value", 1), env) if s == "full" else Val(num=0.0)
        lane = dict(lane="const", lane_c=value.num) if value.num is not None and s != "empty" else {}
        return Val(dtype=dt, dtype_src=node, **lane)

    def _dot(self, node: ast.Call, env: dict[str, Val]) -> Val:
        a = self.eval(kw(node, "input", 0), env)
        b = self.eval(kw(node, "other", 1), env)
        acc_node = kw(node, "acc", 2)
        acc = self.eval(acc_node, env) if acc_node is not None else None
        out_node = kw(node, "out_dtype", 5)
        out_dtype = self.dtype_of(out_node, env)
        self.trace.dots.append((node, a, b, out_dtype if out_node is not None else None))
        # Operand pads: a's axis 0 and b's axis 1 reach the output; the K axis (a's 1, b's 0) is summed over,
        # where zero padding adds nothing and undefined padding pollutes every output.
        pads: set = set()
        kinds: set[str] = set()
        consts: set = set()
        for v, out_axis, k_axis in ((a, 0, 1), (b, 1, 0)):
            if v.lane == "clean":
                continue
            for n, axes in v.pads:
                if axes is not None and axes <= {k_axis}:
                    if v.lane in ("undef", "garbage"):
                        pads.add((n, frozenset({0, 1})))
                        kinds.add("garbage")
                    continue
                pads.add((n, frozenset({out_axis}) if axes is not None else None))
                kinds.add(v.lane)
                consts.add(v.lane_c)
        if acc is not None:
            dtype, src = acc.dtype, acc.dtype_src
        else:
            dtype, src = (out_dtype or "fp32"), node
        out = Val(raw=a.raw or b.raw, dtype=dtype, dtype_src=src, moving=a.moving or b.moving)
        if pads:
            if kinds == {"const"} and consts == {0.0}:
                out = replace(out, lane="const", lane_c=0.0, pads=frozenset(pads))
            else:
                out = replace(out, lane="undef" if "undef" in kinds else "garbage", pads=frozenset(pads))
        if acc is not None and acc.lane != "clean":
            out = replace(out, **_lane_join(out, acc))
        return out


def _stride_params(model: FileModel, decl: KernelDecl) -> frozenset[str]:
    """Kernel parameters that a launch in the file passes from `.stride(...)`, whatever their names (sp_c, s_row):
    a stride may be 1 at run time, so lanes multiplied by it are not flagged as uncoalesced."""
    out: set[str] = set()
    params = list(decl.params)

    def from_stride(e: ast.expr) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stride"
                   for n in ast.walk(e))

    for ln in model.launches():
        if ln.kernel != decl.name:
            continue
        for k, v in ln.keywords.items():
            if k in params and from_stride(v):
                out.add(k)
        positional = [p for p in params if p not in ln.keywords]
        for i, a in enumerate(ln.args):
            if isinstance(a, ast.Starred):
                if from_stride(a.value):  # *x.stride(): the parameters it fills, up to the next explicit argument
                    tail = len(ln.args) - i - 1
                    out.update(positional[i:max(i, len(positional) - tail)])
                break
            if i < len(positional) and from_stride(a):
                out.add(positional[i])
    return frozenset(out)
