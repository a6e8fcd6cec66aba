"""Checks of one @triton.jit function, read from the Trace its walk left (dataflow.py)."""

from __future__ import annotations

import ast
import copy
import math

from .context import AuditContext
from .dataflow import LOW_PRECISION, Access, Trace, Val
from .names import canon, int_literal, is_pow2, kw, names_in, number, short
from .structure import KernelDecl

_IDENTITY = {"max": '-float("inf")', "argmax": '-float("inf")', "min": 'float("inf")', "argmin": 'float("inf")',
             "sum": "0.0", "cumsum": "0.0", "dot": "0.0"}
_DT_NAME = {"fp16": "tl.float16", "bf16": "tl.bfloat16", "input": "the input's dtype"}


def check_kernel(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool, guard: str = "") -> None:
    """Every kernel check; `exact`: the launching wrapper asserts the size is a multiple of the block; `guard`: what
    to verify where only the wrapper's callers check it (host_checks.caller_guards): tail findings drop to P2."""
    _unmasked(ctx, k, trace, exact, guard)
    for rule in (_masked_lanes, _unshifted_exp, _low_precision, _missing_eps, _arange,
                 _ignored_strides, _atomics, _roundtrip, _int32, _uncoalesced):
        rule(ctx, k, trace, exact)


def _unique(items: list, key=id) -> list:
    seen: set = set()
    return [x for x in items if not (key(x) in seen or seen.add(key(x)))]


def _is_load(node: ast.AST, ctx: AuditContext) -> bool:
    return isinstance(node, ast.Call) and short(canon(node.func, ctx.model.aliases)) == "load"


def _size_name(k: KernelDecl, trace: Trace, tiles: frozenset[str]) -> str:
    for t in sorted(tiles):
        if trace.tiled.get(t):
            return sorted(trace.tiled[t])[0]
    sizes = [p for p in k.params if p not in k.constexprs and "stride" not in p.lower()
             and not p.lower().endswith(("ptr", "desc"))]
    return next((p for p in sizes if p.lower() in ("n", "n_elements", "numel", "size", "n_cols", "n_rows")),
                sizes[0] if sizes else "n")


def _unseen_launch(ctx: AuditContext, k: KernelDecl) -> str:
    """'' when the file launches the kernel (or a kernel that calls it); else what the reader must verify."""
    launched = {ln.kernel for ln in ctx.model.launches()}
    if k.name in launched or ctx.model.helper_callers(k.name) & launched:
        return ""
    return (f"{k.name} is launched outside this file, so the sizes it gets are not visible: unless its callers "
            "guarantee the size is a multiple of the block")


def _unmasked(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool, guard: str = "") -> None:
    if exact:
        return
    exact_tiles = {t for t in trace.shape_constexprs if not trace.tiled.get(t) and t not in trace.strided}
    verify = _unseen_launch(ctx, k) or guard
    for a in _unique(trace.accesses, key=lambda a: id(a.node)):
        if a.mask is not None or a.guarded or a.kind.startswith("atomic_") and a.ptr.block_ptr:
            continue
        if a.ptr.block_ptr:
            if not a.boundary:
                ctx.add("block_ptr_boundary", a.node, k.name, verify=verify,
                        why=f"tl.{a.kind} of a block pointer without boundary_check reads or writes past the "
                            "tensor's edge when its shape is not a multiple of block_shape (a sequence length "
                            "that is not a multiple of BLOCK_M/BLOCK_N)",
                        fix="pass boundary_check=(0, 1) (and padding_option=\"zero\" for loads), or assert in the "
                            "wrapper that the size is a multiple of the block",
                        snippet=_with_keywords(a.node, boundary_check="(0, 1)",
                                               **({"padding_option": '"zero"'} if a.kind == "load" else {})))
            continue
        p = a.ptr
        if not p.arange or a.boundary:
            continue
        if p.tiles and all(t in exact_tiles for t in p.tiles):
            continue  # tl.arange(0, HEAD_DIM) with HEAD_DIM the exact extent: in bounds by construction
        if not p.tiles and not p.moving:
            continue
        size = _size_name(k, trace, p.tiles)
        offs = _offsets_name(a.node, k)
        mask = f"{offs} < {size}"
        extra = {"mask": "mask", "other": "0.0"} if a.kind == "load" else {"mask": "mask"}
        ctx.add("unmasked_access", a.node, k.name, verify=verify or _full_tiles(k, trace, a),
                why=f"tl.{a.kind} at offsets from tl.arange without a mask: the last block goes past {size} "
                    "whenever it is not a multiple of the block",
                fix=f"mask = {mask}, passed as mask= (with other= for loads); or guard an unmasked fast path "
                    "with a tl.constexpr such as EVEN_N",
                snippet=f"mask = {mask}\n" + _with_keywords(a.node, **extra))


def _full_tiles(k: KernelDecl, trace: Trace, a: Access) -> str:
    """Issue 26 (FlagGems in the trial): an unmasked access in a loop that stops before the last partial tile
    (`range(0, N - BLOCK + 1, BLOCK)`, `range(N // BLOCK)`), with the same pointer accessed under a mask outside that
    loop (the tail pass), reads only full tiles; the finding says what to verify instead of claiming a bug."""
    loops = [f for f in ast.walk(k.node) if isinstance(f, ast.For) and any(n is a.node for n in ast.walk(f))
             and isinstance(f.iter, ast.Call) and f.iter.args]
    if not loops:
        return ""
    loop = loops[-1]
    end = loop.iter.args[1] if len(loop.iter.args) >= 2 else loop.iter.args[0]
    full = any(isinstance(n, ast.BinOp) and (isinstance(n.op, ast.FloorDiv) or (
        isinstance(n.op, ast.Sub) and any(x in k.constexprs for x in names_in(n.right)))) for n in ast.walk(end))
    base = _base(a)
    tail = any(b.mask is not None and _base(b) == base and not any(b.node is n for n in ast.walk(loop))
               for b in trace.accesses)
    if not (full and tail and base):
        return ""
    return (f"the loop ends at {ast.unparse(end)} (full tiles only) and {base} has a masked pass outside it (the "
            "tail): in bounds if that end never passes the last full tile")


def _offsets_name(node: ast.Call, k: KernelDecl) -> str:
    ptr = node.args[0] if node.args else kw(node, "pointer")
    if isinstance(ptr, ast.BinOp) and isinstance(ptr.right, ast.Name) and ptr.right.id not in k.params:
        return ptr.right.id
    local = [n for n in sorted(names_in(ptr)) if n not in k.params] if ptr is not None else []
    return local[-1] if local else "offs"


def _with_keywords(call: ast.Call, **kws: str) -> str:
    """The call with keyword arguments set (replacing positional ones of the same meaning)."""
    new = copy.deepcopy(call)
    positions = {"mask": 1, "other": 2, "boundary_check": 3, "padding_option": 4}
    is_store = short(ast.unparse(new.func)) == "store"
    if is_store:
        positions = {"mask": 2, "boundary_check": 3}
    keep = min((positions[k] for k in kws if k in positions), default=len(new.args))
    new.args = new.args[:max(keep, 1 if not is_store else 2)]
    new.keywords = [kwd for kwd in new.keywords if kwd.arg not in kws]
    for name, text in kws.items():
        new.keywords.append(ast.keyword(arg=name, value=ast.parse(text, mode="eval").body))
    return ast.unparse(new)


def _bad_lane(kind: str, v: Val) -> bool:
    if v.lane in ("undef", "garbage"):
        return True
    if v.lane != "const" or v.lane_c is None:
        return False
    c = v.lane_c
    if math.isnan(c):
        return True
    if kind in ("max", "argmax"):
        return c > -1e4 and not (v.nonneg and c <= 0)  # max of |x| (amax): 0 padding is its identity
    if kind in ("min", "argmin"):
        return c < 1e4
    return c != 0


def _masked_lanes(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for node, kind, arg, axis, _ in _unique(trace.reductions, key=lambda r: (id(r[0]), r[2].lane, r[2].lane_c)):
        if kind not in _IDENTITY or arg.lane == "clean" or not _bad_lane(kind, arg):
            continue
        # Only pads along the reduced axis meet real data: rows masked and reduced along columns do not.
        pads = [n for n, ax in arg.pads if axis is None or ax is None or axis in ax]
        if not pads:
            continue
        loads = [n for n in pads if _is_load(n, ctx)]
        verify = _loop_keeps_in_bounds(ctx, k, node, loads)
        culprits = [n for n in loads if kw(n, "other", 2) is None]
        if arg.lane == "undef" and culprits:  # the fix is the load's other=, reported there once
            for load in sorted(culprits, key=lambda n: n.lineno):
                _report_other(ctx, k, load, kind, arg, verify)
            continue
        if arg.lane in ("const", "undef") and len(loads) == len(pads):
            # Only the loads whose other= is not the identity are at fault (a product of a load with other=0 and
            # one without other= is undefined because of the second).
            for load in sorted([n for n in loads if not _other_is_identity(n, kind)], key=lambda n: n.lineno):
                _report_other(ctx, k, load, kind, arg, verify)
            continue
        what = "padding mixed with data (such as x - mean)" if arg.lane == "garbage" else \
            f"{_fmt(arg.lane_c)}, not the identity of tl.{kind}"
        ident = _IDENTITY[kind]
        ctx.add("masked_lanes_in_reduction", node, k.name, verify=verify,
                why=f"the masked-off lanes reaching tl.{kind} hold {what}: they change the result",
                fix=f"reset them to the identity right before the reduction: tl.where(mask, value, {ident})",
                snippet=_where_snippet(ctx, node, kind, ident, axis))
    for _, a, b, _ in trace.dots:
        for v, k_axis in ((a, 1), (b, 0)):
            if v.lane != "undef":
                continue
            for n, ax in sorted(v.pads, key=lambda p: p[0].lineno):
                if ax is not None and k_axis in ax and _is_load(n, ctx):
                    _report_other(ctx, k, n, "dot", v)


def _where_snippet(ctx: AuditContext, node: ast.Call, kind: str, ident: str, axis: int | None) -> str:
    arg = node.args[0] if node.args else None
    text = ctx.text(arg) if arg is not None else "v"
    fn = ctx.text(node.func) if not isinstance(node.func, ast.Attribute) or ctx.text(node.func).startswith("tl.") \
        else f"tl.{kind}"
    return f"{fn}(tl.where(mask, {text}, {ident}), axis={axis if axis is not None else 0})  # mask: the load's mask"


def _fmt(c: float | None) -> str:
    if c is None:
        return "an unknown value"
    return "nan" if math.isnan(c) else ("-inf" if c == -math.inf else ("inf" if c == math.inf else f"{c:g}"))


def _other_is_identity(load: ast.Call, kind: str) -> bool:
    c = number(kw(load, "other", 2))
    if c is None:
        return False
    if kind in ("max", "argmax"):
        return c <= -1e4
    if kind in ("min", "argmin"):
        return c >= 1e4
    return c == 0


def _loop_keeps_in_bounds(ctx: AuditContext, k: KernelDecl, node: ast.Call, loads: list[ast.Call]) -> str:
    """'' unless the reduction sits in a loop whose end is not the bound the loads' masks test (for i_s in
    range(0, i_t * BT, BS) with mask o_k < T): then whether any lane is padding depends on values the audit
    cannot see, and the finding says what to verify."""
    loop = next((f for f in ast.walk(k.node) if isinstance(f, ast.For) and any(n is node for n in ast.walk(f))
                 and isinstance(f.iter, ast.Call) and short(ast.unparse(f.iter.func)) in ("range", "static_range")
                 and len(f.iter.args) >= 2), None)
    if loop is None or not loads:
        return ""
    local = {t.id: n.value for n in ast.walk(k.node) if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}
    bounds: set[str] = set()
    for load in loads:
        mask = kw(load, "mask", 1)
        for name in (names_in(mask) if mask is not None else set()):
            e = local.get(name)
            for cmp in ast.walk(e if e is not None else ast.Name(id=name)):
                if isinstance(cmp, ast.Compare):
                    bounds |= {n for c in cmp.comparators for n in names_in(c)}
        for cmp in ast.walk(mask) if mask is not None else []:
            if isinstance(cmp, ast.Compare):
                bounds |= {n for c in cmp.comparators for n in names_in(c)}
    bounds &= set(k.params) - k.constexprs
    end = names_in(loop.iter.args[1])
    if not bounds or end & bounds:
        return ""
    return (f"the loop ends at {ast.unparse(loop.iter.args[1])}, not at the masks' bound "
            f"{', '.join(sorted(bounds))}: lanes are padding only if the loop can reach past it")


def _report_other(ctx: AuditContext, k: KernelDecl, load: ast.Call, kind: str, v: Val, verify: str = "") -> None:
    other = kw(load, "other", 2)
    have = "no other= (undefined lanes)" if other is None else f"other={ctx.text(other)}"
    target = "tl.dot (the K tail)" if kind == "dot" else f"tl.{kind}"
    if other is None and _IDENTITY[kind] == "0.0" and not verify:
        # Issue 26: masked-off lanes without other= read as 0 on every backend (the interpreter zero-fills, and the
        # H200 check of the trial saw a masked-off NaN never reach a sum): 0 is the identity here, so a robustness note.
        verify = ("masked-off lanes without other= read as 0 on every backend Triton ships, the identity of "
                  f"{kind}; other=0.0 only says so (a robustness note, not a wrong result)")
    ctx.add("masked_load_other", load, k.name, verify=verify,
            why=f"this masked load has {have} and feeds {target}: the masked-off lanes must hold "
                f"{_IDENTITY[kind]}, the identity of {kind}",
            fix=f"other={_IDENTITY[kind]}",
            snippet=_with_keywords(load, other=_IDENTITY[kind]))


def _unshifted_exp(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for exp, consumer in _unique(trace.exp_uses, key=lambda e: id(e[0])):
        arg = exp.args[0] if exp.args else None
        if arg is None:
            continue
        axis = kw(consumer, "axis", 1)
        ax = ctx.text(axis) if axis is not None else "0"
        a = ctx.text(arg)
        fn = ctx.text(exp.func)
        shifted = f"{a} - tl.max({a}, axis={ax})" if isinstance(arg, ast.Name) else f"x - tl.max(x, axis={ax})"
        pre = "" if isinstance(arg, ast.Name) else f"x = {a}\n"
        ctx.add("unshifted_exp", exp, k.name, verify=_decay(arg, k),
                why=f"{fn}({a}) of raw loaded data is summed by {ctx.text(consumer.func)}: it overflows to inf for "
                    "inputs above ~88 (fp32), and the softmax/logsumexp becomes NaN",
                snippet=f"{pre}e = {fn}({shifted})  # online: {fn}(x - m_new[:, None]) with a running max")


def _decay(arg: ast.expr, k: KernelDecl) -> str:
    """Issue 26 (mamba's selective_state_update in the trial): exp of a product of two tensors, exp(A * dt), is a
    decay rate times a step, not logits; a softmax's exponent is the data, or the data times a scalar scale."""
    if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mult)):
        return ""
    loaded = {t.id for n in ast.walk(k.node) if isinstance(n, ast.Assign) and "load(" in ast.unparse(n.value)
              for t in n.targets if isinstance(t, ast.Name)}

    def tensor(x: ast.expr) -> bool:
        while isinstance(x, (ast.Subscript, ast.Attribute, ast.Call)) and not isinstance(x, ast.Call):
            x = x.value
        return isinstance(x, ast.Name) and x.id in loaded

    if not (tensor(arg.left) and tensor(arg.right)):
        return ""
    return (f"exp({ast.unparse(arg)}) multiplies two tensors (a decay rate times a step, as exp(A * dt)), not "
            "logits: it overflows only if that product can pass ~88")


def _low_precision(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for name, old, stmt in _unique(trace.accums, key=lambda a: a[0]):
        if old.dtype not in LOW_PRECISION:
            continue
        src = old.dtype_src
        is_alloc = isinstance(src, ast.Call) and short(canon(src.func, ctx.model.aliases)) in (
            "zeros", "full", "zeros_like", "full_like")
        where = src if is_alloc else stmt
        if is_alloc:
            snippet = _with_dtype(src)
        else:
            snippet = f"{name} = {name}.to(tl.float32)  # before the loop; cast once at the store"
        ctx.add("low_precision_accumulator", where, k.name,
                why=f"`{name}` accumulates in a loop in {_DT_NAME.get(old.dtype, old.dtype)}: every step rounds "
                    "to 16 bits (bf16 keeps 8: 256 + 1 == 256) and fp16 overflows at 65504",
                fix=f"declare {name} as tl.float32 and cast once when storing ({name}.to(out_ptr.dtype.element_ty))",
                snippet=snippet)
    for node, _, _, out in trace.dots:
        if out in ("fp16", "bf16"):
            new = copy.deepcopy(node)
            new.keywords = [x for x in new.keywords if x.arg != "out_dtype"]
            new.args = new.args[:3]
            ctx.add("low_precision_accumulator", node, k.name,
                    why=f"tl.dot(..., out_dtype={_DT_NAME[out]}) accumulates the K products in 16 bits",
                    fix="keep tl.dot's fp32 accumulator and cast the finished tile when storing",
                    snippet=f"acc = {ast.unparse(new)}  # fp32\ntl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), "
                            "mask=c_mask)")
    for node, kind, arg, _, has_dtype in _unique(trace.reductions, key=lambda r: id(r[0])):
        if kind in ("sum", "cumsum") and arg.dtype in ("fp16", "bf16") and not has_dtype:
            x = ctx.text(node.args[0]) if node.args else "x"
            ctx.add("low_precision_accumulator", node, k.name,
                    why=f"tl.{kind} of {_DT_NAME[arg.dtype]} data reduces in {_DT_NAME[arg.dtype]} "
                        "(Triton keeps the input dtype for floats): long rows lose digits",
                    fix="upcast before reducing, or pass dtype=tl.float32",
                    snippet=f"s = tl.{kind}({x}.to(tl.float32), axis=0)")


def _with_dtype(call: ast.Call) -> str:
    new = copy.deepcopy(call)
    pos = 2 if short(ast.unparse(new.func)) == "full" else 1
    new.keywords = [x for x in new.keywords if x.arg != "dtype"]
    new.args = new.args[:pos]
    new.keywords.append(ast.keyword(arg="dtype", value=ast.parse("tl.float32", mode="eval").body))
    return ast.unparse(new) + "  # cast once at the store: acc.to(out_ptr.dtype.element_ty)"


def _missing_eps(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    eps = next((p for p in k.params if "eps" in p.lower()), None) or "1e-6"
    for sqrt, _ in _unique(trace.bad_norms, key=lambda b: id(b[0])):
        if not sqrt.args:
            continue
        new = copy.deepcopy(sqrt)
        new.args[0] = ast.BinOp(left=new.args[0], op=ast.Add(), right=ast.parse(eps, mode="eval").body)
        fn = ctx.text(sqrt.func)
        ctx.add("missing_eps", sqrt, k.name,
                why=f"{fn}({ctx.text(sqrt.args[0])}) of a reduction with no epsilon: a row of zeros (or only "
                    "padding) divides by zero and gives inf/NaN",
                fix=f"add {eps} inside the square root",
                snippet=ast.unparse(new))


def _local_consts(k: KernelDecl) -> set[str]:
    """Kernel locals assigned only integer literals (`BLOCK = 128`): Triton folds them into constants."""
    values: dict[str, list[ast.expr]] = {}
    for n in ast.walk(k.node):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    values.setdefault(t.id, []).append(n.value)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            values.setdefault(n.target.id, []).append(n)
    return {name for name, vs in values.items() if all(int_literal(v) is not None for v in vs)}


def _constexpr_expr(node: ast.AST, k: KernelDecl, ctx: AuditContext) -> bool:
    if int_literal(node) is not None:
        return True
    allowed = k.constexprs | set(ctx.model.consts) | set(ctx.model.assigns) | _local_consts(k)
    names = names_in(node)
    return bool(names) and names <= allowed | {"tl"}


def _arange(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for node in _unique(trace.aranges):
        bounds = [kw(node, "start", 0), kw(node, "end", 1)]
        bad = [b for b in bounds if b is not None and not _constexpr_expr(b, k, ctx)]
        if bad:
            name = ctx.text(bad[-1])
            ctx.add("nonconstexpr_arange", node, k.name,
                    why=f"tl.arange bound {name} is not a tl.constexpr: tl.arange needs compile-time bounds",
                    fix=f"pass BLOCK: tl.constexpr = triton.next_power_of_2({name}) from the host and mask "
                        f"offsets >= {name}",
                    snippet=f"offs = tl.arange(0, BLOCK)  # BLOCK: tl.constexpr = triton.next_power_of_2({name})\n"
                            f"mask = offs < {name}")
            continue
        lo, hi = (int_literal(b) if b is not None else None for b in bounds)
        lo = lo or 0
        if hi is not None and not is_pow2(hi - lo):
            p2 = 1 << max(0, (hi - lo - 1).bit_length())
            ctx.add("nonconstexpr_arange", node, k.name,
                    why=f"tl.arange({lo}, {hi}) spans {hi - lo}, not a power of 2: it does not compile",
                    fix=f"use {p2} lanes and mask the last {p2 - (hi - lo)}",
                    snippet=f"offs = {lo} + tl.arange(0, {p2})\nmask = offs < {hi}")


def _ignored_strides(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    strides = [p for p in k.params if "stride" in p.lower() and p not in k.constexprs]
    used = names_in(ast.Module(body=k.node.body, type_ignores=[]))
    vectors = _vector_pointers(ctx, k, trace)
    # W_row_stride of a 1-D weight read at W_ptr + cols: there is one row, its stride is never needed.
    unused = [s for s in strides if s not in used and _stride_owner(k, s) not in vectors]
    if not unused:
        return
    ctx.add("ignored_strides", k.node, k.name, evidence=f"def {k.name}(... {', '.join(unused)} ...)",
            why=f"{k.name} takes {', '.join(unused)} but never uses {'it' if len(unused) == 1 else 'them'}: the "
                "addresses assume a contiguous layout, so a transposed or sliced input is read wrongly",
            fix="multiply each index by its stride (or drop the strides and have the wrapper call .contiguous())",
            snippet=_stride_snippet(k, strides, unused[0]))


def _stride_owner(k: KernelDecl, stride: str) -> str | None:
    """The pointer parameter a stride belongs to: W_row_stride -> W_ptr, stride_xm -> x_ptr."""
    low = stride.lower()
    stems = [low.split("_stride")[0].split("_row")[0]] if not low.startswith("stride") else []
    if low.startswith("stride_"):
        rest = low[len("stride_"):]
        stems += [rest, rest[:-1]] if len(rest) > 1 else [rest]
    for stem in stems:
        for p in k.params:
            pl = p.lower()
            if stem and pl in (stem, f"{stem}_ptr", f"{stem}ptr", f"{stem}_p"):
                return p
    return None


def _row_names(k: KernelDecl) -> set[str]:
    """Locals derived from tl.program_id or a loop variable: a row (or tile) index."""
    def has_pid(e: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and short(ast.unparse(c.func)) in ("program_id", "num_programs")
                   for c in ast.walk(e))

    rows: set[str] = set()
    for _ in range(3):  # a few rounds settle chains such as pid -> row -> row_start
        for n in ast.walk(k.node):
            if isinstance(n, ast.For) and (has_pid(n.iter) or names_in(n.iter) & rows):
                rows |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            if isinstance(n, ast.Assign) and (has_pid(n.value) or names_in(n.value) & rows):
                rows |= {t.id for tgt in n.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
    return rows


def _vector_pointers(ctx: AuditContext, k: KernelDecl, trace: Trace) -> set[str]:
    """Pointer parameters every access of which is indexed without a row index: 1-D vectors (weights, biases)."""
    rows = _row_names(k)
    out: set[str] = set()
    by_base: dict[str, list[bool]] = {}
    for a in trace.accesses:
        ptr = a.node.args[0] if a.node.args else kw(a.node, "pointer")
        if ptr is None:
            continue
        for b in a.ptr.bases:
            by_base.setdefault(b, []).append(bool(names_in(ptr) & rows) or a.ptr.pid)
    for b, rowed in by_base.items():
        if not any(rowed):
            out.add(b)
    return out


def _stride_snippet(k: KernelDecl, strides: list[str], first_unused: str) -> str:
    """A load that uses the stride group (stride_xm, stride_xn) the unused stride belongs to."""
    prefix = first_unused[:-1]
    group = [s for s in strides if s[:-1] == prefix] or [first_unused]
    base = prefix.replace("stride_", "").rstrip("_") or "x"
    ptr = next((p for p in k.params if p.lower() in (f"{base}_ptr", f"{base}ptr", base)), None) or \
        next((p for p in k.params if p.lower().startswith(base) and p.lower().endswith("ptr")), f"{base}_ptr")
    if len(group) >= 2:
        return (f"{base} = tl.load({ptr} + rows[:, None] * {group[0]} + cols[None, :] * {group[1]}, mask=mask, "
                "other=0.0)  # every index times its stride")
    return f"{base} = tl.load({ptr} + idx * {group[0]}, mask=mask, other=0.0)  # the index times its stride"


def _atomics(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for a in _unique(trace.accesses, key=lambda a: id(a.node)):
        if a.kind != "atomic_add" or a.value is None or (a.value.dtype or "").startswith("int"):
            continue
        ctx.add("atomic_order", a.node, k.name,
                why="tl.atomic_add of floats sums in arrival order: the result changes in the last bits from run "
                    "to run (not bitwise reproducible), and programs contend for the address")


def _base(a: Access) -> str | None:
    ptrs = sorted(a.ptr.bases)
    return ptrs[0] if len(ptrs) == 1 else None


def _roundtrip(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    calls = {short(canon(n.func, ctx.model.aliases)) for n in ast.walk(k.node) if isinstance(n, ast.Call)}
    if "debug_barrier" in calls or any(c.startswith("atomic_") for c in calls):
        return  # deliberate communication through memory (locks, split reductions)
    accesses = _unique(trace.accesses, key=lambda a: id(a.node))
    # Stores in a branch that ends with `return` never precede what follows the branch.
    terminal = {id(n) for br in ast.walk(k.node) if isinstance(br, ast.If)
                for body in (br.body, br.orelse) if body and isinstance(body[-1], ast.Return)
                for stmt in body for n in ast.walk(stmt)}
    accesses = [a for a in accesses if not (a.kind == "store" and id(a.node) in terminal)]
    # Issue 26 (deepspeed's layer_norm_residual, held out): a store in one `for` pass over a row and its load in a
    # later pass is a row larger than one block kept in memory between passes; no register can hold it across them.
    loop_of = {id(n): loop for loop in ast.walk(k.node) if isinstance(loop, ast.For)
               for stmt in loop.body for n in ast.walk(stmt)}
    # flash-attn's cross_entropy (sixth held-out batch): `if not PRECOMPUTED: ... store(lse) else: lse = load(lse)`:
    # the two sides of one `if` never both run, so the load never reads that store.
    side_of: dict[int, set[tuple[int, int]]] = {}
    for br in ast.walk(k.node):
        if isinstance(br, ast.If):
            for side, body in ((0, br.body), (1, br.orelse)):
                for stmt in body:
                    for n in ast.walk(stmt):
                        side_of.setdefault(id(n), set()).add((id(br), side))

    def exclusive(x: ast.AST, y: ast.AST) -> bool:
        sx, sy = side_of.get(id(x), set()), side_of.get(id(y), set())
        return any((i, 1 - side) in sy for i, side in sx)

    stores = {}
    for a in sorted(accesses, key=lambda a: a.node.lineno):
        b = _base(a)
        if b is None:
            continue
        key = (b, ast.dump(a.node.args[0]) if a.node.args else "")  # the same address expression
        if a.kind == "store":
            stores.setdefault(key, a)
        elif a.kind == "load" and key in stores and stores[key].node.lineno < a.node.lineno:
            s_loop, l_loop = loop_of.get(id(stores[key].node)), loop_of.get(id(a.node))
            if s_loop is not None and l_loop is not None and s_loop is not l_loop:
                continue
            if exclusive(stores[key].node, a.node):
                continue
            b, first = key[0], stores.pop(key)
            ctx.add("global_roundtrip", a.node, k.name,
                    why=f"{b} is stored at the same address on line {first.node.lineno} and loaded back here: an "
                        "HBM round trip for a value that could stay in registers",
                    fix=f"keep the stored value in a variable and use it instead of re-loading {b}")


def _int32(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    for a in sorted(_unique(trace.accesses, key=lambda a: id(a.node)), key=lambda a: a.node.lineno):
        node = a.ptr.ovf
        if node is None:
            continue
        side = trace.ovf_side.get(id(node), 0)
        pid_side, other = (node.left, node.right) if side == 0 else (node.right, node.left)
        snippet = _widen_snippet(ctx, k, pid_side, other)
        ctx.add("int32_offset_overflow", node, k.name,
                why=f"{ctx.text(pid_side)} (from tl.program_id, int32) times {ctx.text(other)} is computed in "
                    "int32: past 2**31 elements the offset wraps and the access hits the wrong address",
                fix=f"widen before multiplying: {ctx.text(pid_side)}.to(tl.int64)",
                snippet=snippet)
        return


def _widen_snippet(ctx: AuditContext, k: KernelDecl, pid_side: ast.expr, other: ast.expr) -> str:
    if isinstance(pid_side, ast.Name):
        for n in ast.walk(k.node):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == pid_side.id for t in n.targets) \
                    and isinstance(n.value, ast.Call) and short(canon(n.value.func, ctx.model.aliases)) == "program_id":
                return f"{pid_side.id} = {ctx.text(n.value)}.to(tl.int64)"
    text = ctx.text(pid_side)
    wrapped = f"({text})" if not isinstance(pid_side, (ast.Name, ast.Call)) else text
    return f"{wrapped}.to(tl.int64) * {ctx.text(other)}"


def _uncoalesced(ctx: AuditContext, k: KernelDecl, trace: Trace, exact: bool) -> None:
    """Accesses whose every tl.arange axis is multiplied by a size: no axis has consecutive lanes."""
    accesses = sorted(_unique(trace.accesses, key=lambda a: id(a.node)), key=lambda a: a.node.lineno)
    # Next to coalesced 2-D tiles (or block pointers), a strided [BT] vector (lse, a gate per row) is a small
    # side cost: say so at P2 instead of ranking it with the main traffic.
    tiles = any(a.ptr.block_ptr or (len(a.ptr.vaxes) >= 2 and a.ptr.unit) for a in accesses)
    for a in accesses:
        p = a.ptr
        if p.block_ptr or p.unit or not p.scaled or a.kind.startswith("atomic_"):
            continue
        side = tiles and len(p.vaxes) <= 1
        ctx.add("uncoalesced_access", a.node, k.name,
                verify="a strided vector next to the kernel's coalesced tiles: measure before changing the layout"
                if side else "",
                why=f"the lanes of this tl.{a.kind} step through memory by a size, not by 1 (the offsets' tl.arange "
                    "is multiplied by it): each lane costs its own memory transaction")
