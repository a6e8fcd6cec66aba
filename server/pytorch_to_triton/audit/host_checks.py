"""Checks of the host code that launches the kernels: grids, strides, constexpr arguments, autotune, fusion."""

from __future__ import annotations

import ast
import copy
import re

from .context import AuditContext, KernelFacts
from .names import canon, dotted, int_literal, is_pow2, kw, names_in, short, walk_local
from .structure import _NOT_PRODUCT, FileModel, HostFunc, KernelDecl, Launch

_ALLOC = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "tensor", "empty_strided",
          "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"}
_VIEWS = {"view", "reshape", "t", "transpose", "permute", "expand", "flatten", "squeeze", "unsqueeze", "float",
          "half", "bfloat16", "to", "detach", "narrow", "select", "unfold", "as_strided", "mT", "T", "movedim"}
_TORCH_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
                 "float64": "fp64", "int32": "int32", "int64": "int64", "long": "int64", "int": "int32"}


# ---- reading host expressions ---------------------------------------------------------------------
class HostReader:
    """Local facts of host functions: assignments, shapes, literals, tensor contiguity and dtypes."""

    def __init__(self, model: FileModel):
        self.m = model
        self._assigns: dict[str, dict[str, list[tuple[int, ast.expr]]]] = {}
        self.arity: dict[int, int] = {}  # id(synthetic x.shape[i]) -> how many names the unpacking bound

    def assigns(self, fn: HostFunc) -> dict[str, list[tuple[int, ast.expr]]]:
        if fn.qualname not in self._assigns:
            out: dict[str, list[tuple[int, ast.expr]]] = {}
            for node in walk_local(fn.node):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        self._bind(t, node.value, node.lineno, out)
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    self._bind(node.target, node.value, node.lineno, out)
            for v in out.values():
                v.sort(key=lambda x: x[0])
            self._assigns[fn.qualname] = out
        return self._assigns[fn.qualname]

    def _bind(self, t: ast.expr, value: ast.expr, line: int, out: dict) -> None:
        if isinstance(t, ast.Name):
            out.setdefault(t.id, []).append((line, value))
        elif isinstance(t, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                for a, b in zip(t.elts, value.elts):
                    self._bind(a, b, line, out)
            else:  # M, N = x.shape -> M = x.shape[0], N = x.shape[1]
                for i, a in enumerate(t.elts):
                    sub = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                    ast.copy_location(sub, value)
                    self.arity[id(sub)] = len(t.elts)
                    self._bind(a, sub, line, out)

    def value_before(self, fn: HostFunc, name: str, line: int) -> list[ast.expr]:
        return [v for ln, v in self.assigns(fn).get(name, []) if ln <= line]

    def int_value(self, fn: HostFunc | None, e: ast.expr | None, depth: int = 0) -> int | None:
        if e is None or depth > 4:
            return None
        v = int_literal(e)
        if v is not None:
            return v
        if isinstance(e, ast.Name):
            vals = self.assigns(fn).get(e.id, []) if fn is not None else []
            found = {self.int_value(fn, v, depth + 1) for _, v in vals}
            if vals and len(found) == 1:  # PRE_BLOCK = 128 assigned twice is still 128
                return found.pop()
            if not vals and e.id in self.m.consts and float(self.m.consts[e.id]).is_integer():
                return int(self.m.consts[e.id])
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.FloorDiv, ast.Add, ast.Sub, ast.LShift)):
            a, b = self.int_value(fn, e.left, depth + 1), self.int_value(fn, e.right, depth + 1)
            if a is not None and b is not None:
                return {ast.Mult: a * b, ast.Add: a + b, ast.Sub: a - b, ast.LShift: a << b,
                        ast.FloorDiv: a // b if b else 0}[type(e.op)]
        return None

    def shape_raw(self, fn: HostFunc, e: ast.expr, depth: int = 0) -> bool:
        """A per-call size (x.shape[0], x.numel(), n = x.numel()) not rounded into a few buckets."""
        if depth > 5:
            return False
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            return True
        if isinstance(e, ast.Subscript) and self.shape_raw(fn, e.value, depth + 1):
            return True
        if isinstance(e, ast.Attribute) and e.attr == "shape":
            return True
        if isinstance(e, ast.Call):
            name = canon(e.func, self.m.aliases)
            s = short(name)
            if isinstance(e.func, ast.Attribute) and s in ("size", "numel", "stride") and not name.startswith("torch."):
                return True
            if s == "len":
                return True
            if s in ("min", "max"):
                return all(self.shape_raw(fn, a, depth + 1) for a in e.args)
            if s in ("int", "abs"):
                return any(self.shape_raw(fn, a, depth + 1) for a in e.args)
            return False
        if isinstance(e, ast.BinOp):
            return self.shape_raw(fn, e.left, depth + 1) or self.shape_raw(fn, e.right, depth + 1)
        if isinstance(e, ast.IfExp):
            return self.shape_raw(fn, e.body, depth + 1) or self.shape_raw(fn, e.orelse, depth + 1)
        if isinstance(e, ast.Name):
            return any(self.shape_raw(fn, v, depth + 1) for _, v in self.assigns(fn).get(e.id, []))
        return False

    def dtype(self, fn: HostFunc, e: ast.expr, depth: int = 0) -> str | None:
        """The torch dtype a tensor expression is known to have ('fp32'), else None."""
        if depth > 4:
            return None
        if isinstance(e, ast.Name):
            vals = self.assigns(fn).get(e.id, [])
            found = {self.dtype(fn, v, depth + 1) for _, v in vals}
            return found.pop() if len(found) == 1 else None
        if isinstance(e, ast.Call):
            name = canon(e.func, self.m.aliases)
            s = short(name)
            dt = kw(e, "dtype")
            if dt is not None and name.startswith("torch."):
                return _TORCH_DTYPES.get(short(dotted(dt)))
            if isinstance(e.func, ast.Attribute) and not name.startswith("torch."):
                if s in ("half", "bfloat16", "float", "double", "long", "int"):
                    return _TORCH_DTYPES.get({"double": "float64"}.get(s, s))
                if s == "to" and e.args and dotted(e.args[0]).startswith("torch."):
                    return _TORCH_DTYPES.get(short(dotted(e.args[0])))
                if s in _VIEWS | {"contiguous", "clone"} and s != "to":
                    return self.dtype(fn, e.func.value, depth + 1)
        return None

    # ---- contiguity --------------------------------------------------------------------------------
    def strided_input(self, fn: HostFunc, e: ast.expr, line: int, depth: int = 0) -> str | None:
        """The caller's tensor parameter `e` is read from without .contiguous() or a stride check, or None."""
        if depth > 6:
            return None
        if isinstance(e, ast.Call):
            name = canon(e.func, self.m.aliases)
            s = short(name)
            if s == "contiguous" or (name.startswith("torch.") and s in _ALLOC):
                return None
            if isinstance(e.func, ast.Attribute) and s in _VIEWS and not name.startswith("torch."):
                return self.strided_input(fn, e.func.value, line, depth + 1)
            return None
        if isinstance(e, ast.Subscript):
            return self.strided_input(fn, e.value, line, depth + 1)
        if isinstance(e, ast.Attribute) and e.attr in ("T", "mT"):
            return self.strided_input(fn, e.value, line, depth + 1)
        if not isinstance(e, ast.Name):
            return None
        if self._checked(fn, e.id):
            return None
        vals = self.value_before(fn, e.id, line)
        if vals:
            if any(self.strided_input(fn, v, line, depth + 1) is None for v in vals):
                return None
            return self.strided_input(fn, vals[-1], line, depth + 1)
        if e.id in fn.params:
            if self.guarded(fn):
                return None
            return None if self._callers_pass_contiguous(fn, e.id, depth) else e.id
        return None

    def guarded(self, fn: HostFunc) -> bool:
        """A decorator makes the tensor arguments contiguous (@ensure_contiguous, fla's @input_guard/@contiguous)."""
        for d in fn.node.decorator_list:
            name = short(canon(d.func if isinstance(d, ast.Call) else d, self.m.aliases)).lower()
            if "contiguous" in name or name == "input_guard":
                return True
        return False

    def _checked(self, fn: HostFunc, name: str) -> bool:
        for node in walk_local(fn.node):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == name and \
                    node.func.attr in ("is_contiguous", "stride", "contiguous"):
                return True
        return False

    def _callers_pass_contiguous(self, fn: HostFunc, param: str, depth: int) -> bool:
        callers = self.m.callers_of(fn.qualname)
        if not callers:
            return False
        # self/cls/ctx is not in the call's arguments (Cls.apply(a, b) reaches forward(ctx, a, b))
        offset = 1 if fn.cls and fn.params and fn.params[0] in ("self", "cls", "ctx") else 0
        pos = fn.params.index(param) - offset
        for caller, call in callers:
            arg = kw(call, param)
            if arg is None and 0 <= pos < len(call.args) and \
                    not any(isinstance(a, ast.Starred) for a in call.args[:pos + 1]):
                arg = call.args[pos]
            if arg is None or self.strided_input(caller, arg, call.lineno, depth + 1) is not None:
                return False
        return True


# ---- the checks ---------------------------------------------------------------------------------------
def exact_kernels(model: FileModel) -> set[str]:
    """Kernels whose launching wrapper asserts (or raises unless) the size divides the block, and the helpers
    only they call."""
    exact = {ln.kernel for fn in model.funcs.values() if _modulo_checked(fn) for ln in fn.launches}
    launched = {ln.kernel for ln in model.launches()}
    for k in model.kernels.values():
        callers = model.helper_callers(k.name)
        if k.name not in launched and callers and all(c in exact or c not in launched for c in callers) and \
                callers & exact:
            exact.add(k.name)
    return exact


def _refuses_on_modulo(fn: HostFunc) -> bool:
    """fn tests a size modulo and stops unless it divides: as _modulo_checked, or `if n % B: return "why"` (a
    refusal: a function that says why a plan cannot run, its caller raising or falling back on it)."""
    if _modulo_checked(fn):
        return True
    for node in walk_local(fn.node):
        if isinstance(node, ast.If) and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod)
                                            for b in ast.walk(node.test)) and \
                any(isinstance(s, ast.Return) and isinstance(s.value, (ast.Constant, ast.JoinedStr)) and
                    s.value is not None and not (isinstance(s.value, ast.Constant) and s.value.value is None)
                    for s in node.body):
            return True
    return False


def _guarding_caller(model: FileModel, fn: HostFunc, depth: int = 0) -> str | None:
    """The function that checks the sizes before fn runs, when every product caller of fn in the file does (itself,
    through a function it calls first such as a plan's refusal, or its own callers, 3 levels up); else None."""
    callers = [c for c, _ in model.callers_of(fn.qualname) if not _NOT_PRODUCT.match(short(c.qualname))]
    if not callers or depth > 3:
        return None
    names = []
    for c in callers:
        name = c.qualname if _refuses_on_modulo(c) else next(
            (q for q, _ in c.calls if q in model.funcs and q != fn.qualname and _refuses_on_modulo(model.funcs[q])),
            None) or _guarding_caller(model, c, depth + 1)
        if name is None:
            return None
        names.append(name)
    return names[0]


def caller_guards(model: FileModel) -> dict[str, str]:
    """Kernel -> what the reader must verify, for kernels launched only from functions whose callers check the size
    modulo first (flash attention's descriptor backward: backward() raises unless bwd_tma_refusal finds S a multiple
    of both blocks; the launching _dkdv_tma checks nothing itself), and the helpers only they call. The launch's own
    function does not show the check, so a tail finding there is a P2 `verify:`, never silence."""
    by_kernel: dict[str, list[str | None]] = {}
    for fn in model.funcs.values():
        for ln in fn.launches:
            g = None if _modulo_checked(fn) else _guarding_caller(model, fn)
            by_kernel.setdefault(ln.kernel, []).append(g and f"{fn.qualname}'s callers check the sizes first ({g}): "
                                                       "in bounds if that check makes the size a multiple of the block")
    guards = {k: gs[0] for k, gs in by_kernel.items() if all(gs)}
    launched = set(by_kernel)
    for k in model.kernels.values():
        callers = model.helper_callers(k.name) & launched
        if k.name not in launched and callers and all(c in guards for c in callers):
            guards[k.name] = guards[sorted(callers)[0]]
    return guards


def _modulo_checked(fn: HostFunc) -> set[str]:
    """Divisors the function asserts (or raises unless) divide the size: `if n % 4096: raise`."""
    out: set[str] = set()
    for node in walk_local(fn.node):
        # assert n % B == 0; if n % B: raise ...; while n % R: R //= 2 (leaves R dividing n)
        test = node.test if isinstance(node, (ast.Assert, ast.If, ast.While)) else None
        if test is None or (isinstance(node, ast.If) and not any(isinstance(s, ast.Raise) for s in node.body)):
            continue
        out |= {ast.unparse(b.right) for b in ast.walk(test) if isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod)}
    return out


def param_dtypes(model: FileModel, reader: HostReader) -> dict[str, dict[str, str]]:
    """Kernel -> pointer argument -> dtype, where every launch passes a tensor of known dtype."""
    seen: dict[str, dict[str, set]] = {}
    for fn in model.funcs.values():
        for ln in fn.launches:
            k = model.kernels[ln.kernel]
            for p, arg in ln.bind(k.params).items():
                seen.setdefault(ln.kernel, {}).setdefault(p, set()).add(reader.dtype(fn, arg))
    return {k: {p: next(iter(d)) for p, d in ps.items() if len(d) == 1 and None not in d} for k, ps in seen.items()}


def check_host(ctx: AuditContext, reader: HostReader) -> None:
    """Every host check, for every launch in the file."""
    model = ctx.model
    for fn in model.funcs.values():
        for ln in fn.launches:
            facts = ctx.facts.get(ln.kernel)
            if facts is None:
                continue
            _grid(ctx, reader, fn, ln, facts)
            _constexpr_args(ctx, reader, fn, ln, facts)
            _num_warps_launch(ctx, reader, fn, ln, facts)
            _contiguous(ctx, reader, fn, ln, facts)
        _unfused(ctx, reader, fn)
        _low_precision_partials(ctx, reader, fn)
    for q in sorted(model.forward_path()):
        _device_asserts(ctx, model.funcs[q])
    _backward_flags(ctx)
    for facts in ctx.facts.values():
        _autotune_key(ctx, facts)
        _num_warps_configs(ctx, reader, facts)
        _missing_autotune(ctx, facts)


def _grid_dims(reader: HostReader, fn: HostFunc, g: ast.expr, line: int) -> list[ast.expr] | None:
    if isinstance(g, (ast.Tuple, ast.List)):
        return list(g.elts)
    if isinstance(g, ast.Lambda):
        return _grid_dims(reader, fn, g.body, line)
    if isinstance(g, ast.Name):
        if g.id in fn.local_defs:
            rets = [n.value for n in walk_local(fn.local_defs[g.id]) if isinstance(n, ast.Return) and n.value]
            return _grid_dims(reader, fn, rets[0], line) if len(rets) == 1 else None
        vals = reader.value_before(fn, g.id, line)
        return _grid_dims(reader, fn, vals[-1], line) if vals else None
    return None


def _exact_size(div: ast.BinOp) -> bool:
    """Issue 26 (FlagGems in the trial): x.numel() // heads // dim divides a tensor's element count by sizes of that
    tensor, an exact dimension, not a count of blocks; a divisor named like a block (BLOCK, tile) or a literal is not."""
    left: ast.expr = div
    divisors = []
    while isinstance(left, ast.BinOp) and isinstance(left.op, ast.FloorDiv):
        divisors.append(left.right)
        left = left.left
    if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "numel"):
        return False
    return all(isinstance(d, (ast.Name, ast.Subscript, ast.Attribute)) and not any(
        w in ast.unparse(d).lower() for w in ("block", "tile", "chunk", "split")) for d in divisors)


_NEW = {"empty", "zeros", "ones", "full", "empty_strided", "new_empty", "new_zeros", "new_full"}
_BLOCKISH = ("block", "tile", "chunk", "split")


def _output_extent(fn: HostFunc, name: str, div: ast.BinOp) -> bool:
    """`PH = OH // P` that is also a dimension of a tensor fn allocates (`torch.empty((N, C, PH, PW))`): the output's
    own extent (max_pool2d floors by definition), so a grid over it covers the output; a divisor named like a block
    (BLOCK, tile) stays a count of blocks: a partial-sums buffer of n // BLOCK drops the tail as its grid does."""
    if any(w in ast.unparse(div.right).lower() for w in _BLOCKISH):
        return False
    for node in walk_local(fn.node):
        if isinstance(node, ast.Call) and short(dotted(node.func) or "") in _NEW and node.args:
            shape = node.args[0]
            dims = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else node.args
            if any(isinstance(x, ast.Name) and x.id == name for x in dims):
                return True
    return False


def _is_ceil(div: ast.BinOp) -> bool:
    """(n + B - 1) // B and -(-n // B) are ceilings, not floors."""
    left = div.left
    if isinstance(left, ast.UnaryOp) and isinstance(left.op, ast.USub):
        return True
    text, den = ast.unparse(left), ast.unparse(div.right)
    return isinstance(left, ast.BinOp) and ("- 1" in text or den in text)


class _ToCdiv(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv) and not _is_ceil(node):
            return ast.Call(func=ast.parse("triton.cdiv", mode="eval").body, args=[node.left, node.right], keywords=[])
        return node


def _divisor_names(e: ast.expr) -> set[str]:
    """Names that only divide in a grid expression: the second argument of cdiv, the right side of / or //."""
    out: set[str] = set()
    for node in ast.walk(e):
        if isinstance(node, ast.Call) and short(dotted(node.func) or "") == "cdiv" and len(node.args) == 2:
            out |= set(names_in(node.args[1]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
            out |= set(names_in(node.right))
    everywhere = [n.id for n in ast.walk(e) if isinstance(n, ast.Name)]
    return {n for n in out if everywhere.count(n) == 1}


def _grid(ctx: AuditContext, reader: HostReader, fn: HostFunc, ln: Launch, facts: KernelFacts) -> None:
    dims = _grid_dims(reader, fn, ln.grid, ln.line)
    if dims is None:
        return
    exprs: list[ast.expr] = list(dims)
    for d in dims:  # one level of names whose value is a floor division: n_blocks = n // BLOCK; grid = (n_blocks,)
        divisors = _divisor_names(d)  # cdiv(G, GPT) with GPT = BLOCK_N // GS: a tile's group count, not a count of
        for n in names_in(d):         # programs (a trial's fused GroupNorm); rounding it down rounds the grid up
            if n in divisors:
                continue
            exprs += [v for v in reader.value_before(fn, n, ln.line)[-1:]
                      if isinstance(v, ast.BinOp) and isinstance(v.op, ast.FloorDiv) and not _output_extent(fn, n, v)]
    checked = _modulo_checked(fn)
    guard = None if checked else _guarding_caller(ctx.model, fn)
    checked_values = [v for v in (reader.int_value(fn, ast.parse(c, mode="eval").body) for c in checked) if v]
    meta = f"lambda {ln.grid.args.args[0].arg}: " if isinstance(ln.grid, ast.Lambda) and ln.grid.args.args else ""
    fixed_grid = f"grid = {meta}" + ast.unparse(_ToCdiv().visit(ast.Tuple(elts=copy.deepcopy(dims), ctx=ast.Load())))
    for e in exprs:
        for div in ast.walk(e):
            if isinstance(div, ast.BinOp) and isinstance(div.op, ast.FloorDiv) and not _is_ceil(div) and \
                    not _exact_size(div) and \
                    ast.unparse(div.right) not in checked and not reader.shape_raw(fn, div.right) and \
                    not _divides(reader.int_value(fn, div.right), checked_values):
                fixed = fixed_grid if any(e is d for d in dims) else ast.unparse(_ToCdiv().visit(copy.deepcopy(e)))
                ctx.add("grid_floor_division", div, fn.qualname,
                        verify=f"{fn.qualname}'s callers check the sizes first ({guard}): exact if that check "
                               f"makes {ctx.text(div.left)} a multiple of {ctx.text(div.right)}" if guard else "",
                        why=f"{ctx.text(div)} rounds down: the last partial block of {ctx.text(div.left)} gets no "
                            "program, and none runs at all when it is smaller than the block",
                        fix=f"triton.cdiv({ctx.text(div.left)}, {ctx.text(div.right)})",
                        snippet=fixed)
    axes = facts.trace.axes
    if axes and max(axes) >= len(dims):
        need = max(axes) + 1
        ctx.add("grid_axis_mismatch", ln.node, fn.qualname,
                why=f"{ln.kernel} reads tl.program_id({max(axes)}) but the grid has {len(dims)} "
                    f"dimension{'s' if len(dims) != 1 else ''}: program_id({max(axes)}) is always 0, so only the "
                    "first slice along that axis is computed",
                fix=f"launch a {need}-D grid, one entry per program_id axis",
                snippet=f"grid = ({', '.join(ctx.text(d) for d in dims)}{', ' if dims else ''}"
                        f"{', '.join(f'n_axis{i}' for i in range(len(dims), need))})")


def _divides(d: int | None, asserted: list[int]) -> bool:
    """`assert n % 128 == 0` makes n // 32 and n // 128 exact."""
    return bool(d) and any(a % d == 0 for a in asserted)


# A size that changes from call to call (batch, sequence, token count) vs one fixed by the model (hidden, heads).
_TOKEN_NAME = re.compile(r"batch|^(b|bs|bsz|bt|m|t|n_?rows|rows|n_?ctx|seq\w*|\w*_len|n_?tokens?|tokens?|"
                         r"num_tokens|total\w*|numel|n_elements)$", re.I)
_FEATURE_NAME = re.compile(r"hidden|dim|head|^(d|k|v|h|hq|hk|g|ng|nh|hd|c|n_?cols|cols|vocab\w*|v_size|"
                           r"channels?|groups?|ffn\w*|width|features?|n_?embd|inter\w*)$|_dim$|^n_[a-z]+_heads?$",
                           re.I)


def size_kind(reader: HostReader, fn: HostFunc, e: ast.expr, depth: int = 0) -> str:
    """'tokens' for a size that follows the batch/sequence (x.shape[0], numel(), batch_size), 'features' for one
    fixed per model (x.shape[-1], hidden_size, n_heads), '' when the code does not say."""
    if depth > 4:
        return ""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("numel", "nelement"):
        return "tokens"
    if isinstance(e, ast.Call) and short(dotted(e.func)) == "len":
        return "tokens"
    if isinstance(e, ast.Subscript) and isinstance(e.slice, (ast.Constant, ast.UnaryOp)):
        idx = int_literal(e.slice) if isinstance(e.slice, ast.Constant) else None
        neg = isinstance(e.slice, ast.UnaryOp) and isinstance(e.slice.op, ast.USub)
        arity = reader.arity.get(id(e))
        if neg or (idx is not None and arity and idx == arity - 1):
            return "features"
        if idx == 0:
            return "tokens"
    if isinstance(e, ast.Attribute) and _FEATURE_NAME.search(e.attr):
        return "features"
    if isinstance(e, ast.Name):
        if _FEATURE_NAME.search(e.id):
            return "features"
        if _TOKEN_NAME.search(e.id):
            return "tokens"
        kinds = {size_kind(reader, fn, v, depth + 1) for _, v in reader.assigns(fn).get(e.id, [])}
        return kinds.pop() if len(kinds) == 1 else ("tokens" if "tokens" in kinds else "")
    if isinstance(e, ast.BinOp):
        kinds = {size_kind(reader, fn, x, depth + 1) for x in (e.left, e.right)} - {""}
        return "tokens" if "tokens" in kinds else (kinds.pop() if kinds else "")
    return ""


def _constexpr_args(ctx: AuditContext, reader: HostReader, fn: HostFunc, ln: Launch, facts: KernelFacts) -> None:
    k = facts.decl
    tuned = _tuned(ctx.model, k)
    arange_bounds = _arange_bound_params(facts)
    for p, arg in ln.bind(k.params).items():
        if p not in k.constexprs:
            continue
        v = reader.int_value(fn, arg)
        if p in arange_bounds and v is not None and not is_pow2(v):
            ctx.add("nonconstexpr_arange", arg, fn.qualname, evidence=f"{p}={ctx.text(arg)}",
                    why=f"{p}={v} is a tl.arange bound in {k.name} but not a power of 2: the kernel does not compile",
                    fix=f"{p}=triton.next_power_of_2(...) ({1 << (v - 1).bit_length()}) and mask the tail",
                    snippet=f"{p}={1 << (v - 1).bit_length()}  # or triton.next_power_of_2(n); mask offs < n")
        if p in facts.trace.shape_constexprs or p in tuned:
            continue
        if reader.shape_raw(fn, arg):
            kind = size_kind(reader, fn, arg)
            verify = "" if kind == "tokens" else (
                f"{ctx.text(arg)} looks like a size fixed by the model (hidden size, heads), so it compiles once per "
                "model; it is a problem only if it changes from call to call (batch, sequence length)")
            ctx.add("constexpr_recompile", arg, fn.qualname, evidence=f"{p}={ctx.text(arg)}", verify=verify,
                    why=f"{p} is a tl.constexpr of {k.name} and gets {ctx.text(arg)}, a per-call size: each new "
                        "value compiles the kernel again (hundreds of ms) instead of reusing it",
                    fix=f"drop tl.constexpr from {p} (a runtime int argument), or bucket it with "
                        "triton.next_power_of_2 if it must be compile-time",
                    snippet=f"def {k.name}(..., {p}, ...):  # runtime argument, not tl.constexpr\n"
                            f"{k.name}[grid](..., {ctx.text(arg)}, ...)")


def _arange_bound_params(facts: KernelFacts) -> set[str]:
    out = set()
    for node in facts.trace.aranges:
        for b in node.args[:2]:
            if isinstance(b, ast.Name):
                out.add(b.id)
    return out


def _tuned(model: FileModel, k: KernelDecl) -> set[str]:
    keys: set[str] = set()
    for cfg in model.autotune_configs(k):
        d = cfg.args[0] if cfg.args else kw(cfg, "kwargs")
        if isinstance(d, ast.Dict):
            keys |= {x.value for x in d.keys if isinstance(x, ast.Constant) and isinstance(x.value, str)}
    return keys


def _elems(tiles: dict[str, int]) -> int:
    vals = sorted(tiles.values(), reverse=True)
    return vals[0] if len(vals) == 1 else vals[0] * vals[1]


def _warps_problem(tiles: dict[str, int], warps: int) -> tuple[str, int] | None:
    elems = _elems(tiles)
    per_thread = elems / (32 * warps)
    limit = 128 if len(tiles) == 1 else 256
    if per_thread >= 1 and per_thread <= limit:
        return None
    good = max(1, min(16, 1 << max(0, (elems // (16 * 32)).bit_length() - 1)))
    if per_thread < 1:
        return f"{elems} elements over {warps * 32} threads: {per_thread:.2g} per thread, most threads idle", good
    return f"{elems} elements over {warps * 32} threads: {per_thread:.0f} per thread, registers spill", good


def _num_warps_launch(ctx: AuditContext, reader: HostReader, fn: HostFunc, ln: Launch, facts: KernelFacts) -> None:
    warps = reader.int_value(fn, ln.keywords.get("num_warps"))
    if warps is None:
        return
    bound = ln.bind(facts.decl.params)
    tile_names = facts.trace.shape_constexprs
    tiles = {t: reader.int_value(fn, bound.get(t)) for t in tile_names}
    if not tiles or any(v is None for v in tiles.values()):
        return
    problem = _warps_problem({t: v for t, v in tiles.items() if v is not None}, warps)
    if problem:
        what, good = problem
        ctx.add("num_warps_mismatch", ln.keywords["num_warps"], fn.qualname,
                evidence=f"num_warps={warps}, " + ", ".join(f"{t}={v}" for t, v in tiles.items()),
                why=f"{what}", fix=f"num_warps={good} for this block (4-64 elements per thread)",
                snippet=f"{ln.kernel}[grid](..., {', '.join(f'{t}={v}' for t, v in tiles.items())}, num_warps={good})")


def _num_warps_configs(ctx: AuditContext, reader: HostReader, facts: KernelFacts) -> None:
    for cfg in ctx.model.autotune_configs(facts.decl):
        d = cfg.args[0] if cfg.args else None
        warps = reader.int_value(None, kw(cfg, "num_warps"))
        if not isinstance(d, ast.Dict) or warps is None:
            continue
        vals = {k.value: int_literal(v) for k, v in zip(d.keys, d.values) if isinstance(k, ast.Constant)}
        tiles = {t: vals.get(t) for t in facts.trace.shape_constexprs}
        if not tiles or any(v is None for v in tiles.values()):
            continue
        problem = _warps_problem({t: v for t, v in tiles.items() if v is not None}, warps)
        if problem:
            what, good = problem
            new = copy.deepcopy(cfg)
            new.keywords = [x for x in new.keywords if x.arg != "num_warps"] + [
                ast.keyword(arg="num_warps", value=ast.Constant(good))]
            ctx.add("num_warps_mismatch", cfg, facts.decl.name, why=what,
                    fix=f"num_warps={good} for this config", snippet=ast.unparse(new))


def _contiguous(ctx: AuditContext, reader: HostReader, fn: HostFunc, ln: Launch, facts: KernelFacts) -> None:
    if facts.stride_params:
        return
    indexed = {b for a in facts.trace.accesses for b in a.ptr.bases if a.ptr.arange}  # vector (flat) indexing
    for p, arg in ln.bind(facts.decl.params).items():
        if p not in indexed:
            continue
        name = reader.strided_input(fn, arg, ln.line)
        if name is None:
            continue
        verify = ""
        if _internal_half(ctx.model, fn):
            verify = (f"{fn.qualname} is called from outside this file (its name marks it as one half of an op), so "
                      f"the file does not show whether its callers pass {name} contiguous")
        ctx.add("assumed_contiguous", ln.node, fn.qualname, evidence=f"{ln.kernel}[...](... {ctx.text(arg)} ...)",
                verify=verify,
                why=f"{ln.kernel} takes no strides, so it reads {p} as dense row-major, but {name} reaches it "
                    "without .contiguous() or a stride check: a transposed or sliced input gives wrong results",
                fix=f"{name} = {name}.contiguous() before the launch (or pass {name}.stride(...) and use them)",
                snippet=f"{name} = {name}.contiguous()\n{ln.kernel}[grid](...)")


_HALF_NAME = re.compile(r"^_|(fwd|bwd|forward|backward|_kernel|_impl)$|_(fwd|bwd)_", re.I)


def _internal_half(model: FileModel, fn: HostFunc) -> bool:
    """A plain function with no caller in the file, named as the forward/backward half of an op (chunk_fwd_h,
    swiglu_fg_kernel): an autograd Function or dispatcher in another module calls it."""
    return fn.cls is None and not model.callers_of(fn.qualname) and bool(_HALF_NAME.search(short(fn.qualname)))


def _full_size(reader: HostReader, fn: HostFunc, e: ast.expr) -> bool:
    if not isinstance(e, ast.Call):
        return False
    name = canon(e.func, reader.m.aliases)
    s = short(name)
    if not name.startswith("torch.") or s not in _ALLOC:
        return False
    if s.endswith("_like"):
        return True
    shape = e.args[0] if e.args else kw(e, "size")
    if isinstance(shape, ast.Attribute) and shape.attr == "shape":
        return True
    if isinstance(shape, (ast.Tuple, ast.List)):
        names = [x.id for x in shape.elts if isinstance(x, ast.Name)]
        if len(names) >= 3 and len(set(names)) < len(names):  # (B, H, T, T): a size squared, bigger than any input
            return True
    if isinstance(shape, ast.Call) and isinstance(shape.func, ast.Attribute) and shape.func.attr == "size":
        return True
    if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts and all(isinstance(x, ast.Name) for x in shape.elts):
        sources, arity = set(), set()
        for x in shape.elts:
            vals = reader.assigns(fn).get(x.id, [])
            if len(vals) != 1 or not isinstance(vals[0][1], ast.Subscript) or \
                    not isinstance(vals[0][1].value, ast.Attribute) or vals[0][1].value.attr != "shape":
                return False
            sources.add(ast.unparse(vals[0][1].value))
            arity.add(reader.arity.get(id(vals[0][1]), -1))
        return len(sources) == 1 and arity == {len(shape.elts)}  # (M, N) of M, N = x.shape: x's full shape
    return False


_METADATA = {"stride", "shape", "size", "dtype", "device", "numel", "dim", "ndim", "is_contiguous", "element_size"}


def _unfused(ctx: AuditContext, reader: HostReader, fn: HostFunc) -> None:
    launches = sorted(fn.launches, key=lambda x: x.line)
    uses: dict[str, int] = {}
    meta = {id(n.value) for n in walk_local(fn.node) if isinstance(n, ast.Attribute) and n.attr in _METADATA}
    for node in walk_local(fn.node):  # att.stride(0), att.shape: metadata, not another reader of the values
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in meta:
            uses[node.id] = uses.get(node.id, 0) + 1
    for i, first in enumerate(launches):
        f1 = ctx.facts.get(first.kernel)
        if f1 is None:
            continue
        for p, arg in first.bind(f1.decl.params).items():
            if p not in f1.stored or p in f1.loaded or not isinstance(arg, ast.Name):
                continue
            vals = reader.assigns(fn).get(arg.id, [])
            if len(vals) != 1 or not _full_size(reader, fn, vals[0][1]):
                continue
            for second in launches[i + 1:]:
                f2 = ctx.facts.get(second.kernel)
                if f2 is None:
                    continue
                readers = [q for q, a in second.bind(f2.decl.params).items()
                           if isinstance(a, ast.Name) and a.id == arg.id]
                if readers and all(q in f2.loaded and q not in f2.stored for q in readers) and \
                        uses.get(arg.id, 0) == 1 + len(readers):
                    ctx.add("unfused_intermediate", first.node, fn.qualname,
                            why=f"{first.kernel} writes the full-size buffer {arg.id} and only {second.kernel} reads "
                                f"it (line {second.line}): one extra HBM write and read of the whole tensor",
                            fix=f"fuse {first.kernel} and {second.kernel}: compute {arg.id}'s values and consume them "
                                "in the same program, in registers",
                            snippet=f"@triton.jit\ndef fused_kernel(...):\n    # body of {first.kernel}, then of "
                                    f"{second.kernel} on the values instead of a load of {arg.id}\n"
                                    f"fused_kernel[grid](...)  # {arg.id} is no longer allocated")
                    break


def _key_names(model: FileModel, expr: ast.expr | None) -> list[str] | None:
    if isinstance(expr, ast.Name):
        expr = model.module_value(expr.id)
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _autotune_key(ctx: AuditContext, facts: KernelFacts) -> None:
    k = facts.decl
    if k.autotune is None:
        return
    key_expr = kw(k.autotune, "key", 1)
    key = _key_names(ctx.model, key_expr)
    sizes = sorted({s for t in facts.trace.tiled.values() for s in t})
    if key_expr is None or key == []:
        ctx.add("autotune_key", k.autotune, k.name, evidence=ctx.text(k.autotune)[:160],
                why=f"@triton.autotune on {k.name} has an empty key: the config chosen for the first call is "
                    "reused for every shape after it",
                fix=f"key=[{', '.join(repr(s) for s in sizes) or 'size arguments'}]",
                snippet=f"@triton.autotune(configs=..., key={sizes!r})")
        return
    if key is None or kw(k.autotune, "prune_configs_by") is not None:
        return  # a pruning function already ties the configs to the key arguments
    missing: set[str] = set()
    for t in _tuned(ctx.model, k):
        # do_not_specialize: left out on purpose; a stride is no extent (megatron's `x_off < head_num * stride`:
        # the configs depend on head_num, keyed, not on the stride that scales it)
        dims = {d for d in facts.trace.tiled.get(t, set()) - k.no_specialize if "stride" not in d.lower()}
        if dims and not dims & set(key):
            missing |= dims
    if missing:
        new_key = key + sorted(missing)
        ctx.add("autotune_key", k.autotune, k.name, evidence=f"key={key!r}",
                why=f"the tuned blocks tile {', '.join(sorted(missing))}, which the key={key!r} leaves out: the "
                    f"config benchmarked for the first {', '.join(sorted(missing))} is reused for every other",
                fix=f"key={new_key!r}", snippet=f"@triton.autotune(configs=..., key={new_key!r})")


def _missing_autotune(ctx: AuditContext, facts: KernelFacts) -> None:
    k = facts.decl
    if k.autotune is not None or k.heuristics or k.helper:
        return
    grids = [ln.grid for ln in ctx.model.launches() if ln.kernel == k.name]
    if grids and all(isinstance(g, ast.Tuple) and [int_literal(e) for e in g.elts] == [1] for g in grids):
        return  # a single-program pass (a final reduction): nothing for configs to spread
    tiles = {t: s for t, s in facts.trace.tiled.items() if s and t in facts.trace.shape_constexprs}
    if not tiles:
        return
    sizes = sorted({s for v in tiles.values() for s in v})
    covering = _covering_blocks(ctx, k.name, k.params, set(tiles))
    if covering:
        # A block the caller sizes with next_power_of_2 covers its whole dimension (no loop over it): a fixed config
        # smaller than the size would drop elements, so only num_warps is offered.
        ctx.add("missing_autotune", k.node, k.name, evidence=f"def {k.name}(... {', '.join(sorted(tiles))} ...)",
                why=f"{k.name} runs with num_warps fixed by the caller for every shape of {', '.join(sizes)}; "
                    f"{', '.join(sorted(covering))} is sized with next_power_of_2 at the launch: if it must cover "
                    "its whole dimension (no loop over it), fixed values would drop the elements past the block, so "
                    "only num_warps is tuned here (tune the block too only where a loop steps through the dimension)",
                snippet=f"@triton.autotune(configs=[triton.Config({{}}, num_warps=w) for w in (2, 4, 8)], "
                        f"key={sizes!r})\n@triton.jit\ndef {k.name}(...): ...  # "
                        f"{', '.join(sorted(covering))} still passed as next_power_of_2(...) at the launch")
        return
    block = sorted(tiles)[0]
    if len(tiles) == 1:
        configs = (f"[triton.Config({{{block!r}: b}}, num_warps=w)\n"
                   "                          for b, w in ((1024, 4), (2048, 8), (4096, 8))]")
    else:
        # A reduction tile (BLOCK_K) stays at 32: 128 x 128 x 128 fp32 operand tiles (256 KiB a stage) do not fit
        # in shared memory.
        small = ", ".join(f"{t!r}: {32 if t.upper().endswith('K') else 64}" for t in sorted(tiles))
        big = ", ".join(f"{t!r}: {32 if t.upper().endswith('K') else 128}" for t in sorted(tiles))
        configs = (f"[triton.Config({{{small}}}, num_warps=4),\n"
                   f"                          triton.Config({{{big}}}, num_warps=8)]")
    ctx.add("missing_autotune", k.node, k.name, evidence=f"def {k.name}(... {', '.join(sorted(tiles))} ...)",
            why=f"{k.name} tiles {', '.join(sizes)} with fixed blocks ({', '.join(sorted(tiles))}) chosen by the "
                "caller: one block and num_warps are right for at most one shape",
            snippet=f"@triton.autotune(configs={configs}, key={sizes!r})\n"
                    f"@triton.jit\ndef {k.name}(...): ...  # launch without {', '.join(sorted(tiles))}=: the "
                    "autotuner picks them")


def _covering_blocks(ctx: AuditContext, kernel: str, params: list[str], tiles: set[str]) -> set[str]:
    """Tile parameters some launch passes as next_power_of_2(...), directly or through a name assigned from it."""
    pow2_names = {t.id for node in ast.walk(ctx.model.tree) if isinstance(node, ast.Assign)
                  and "next_power_of_2" in ast.unparse(node.value) for t in node.targets if isinstance(t, ast.Name)}
    out: set[str] = set()
    for ln in ctx.model.launches():
        if ln.kernel != kernel:
            continue
        for p, arg in ln.bind(params).items():
            if p in tiles and ("next_power_of_2" in ast.unparse(arg) or
                               (isinstance(arg, ast.Name) and arg.id in pow2_names)):
                out.add(p)
    return out


# Tensor methods whose value lives on the GPU: using them in an assert copies it to the host.
_DEVICE_VALUE = {"all", "any", "item", "max", "min", "sum", "amax", "amin", "mean", "isfinite", "isnan", "isinf",
                 "allclose", "equal", "count_nonzero", "nonzero", "unique", "tolist", "abs", "prod"}
_TORCH_VALUE = {"all", "any", "allclose", "equal", "isfinite", "isnan", "isinf", "count_nonzero", "max", "min",
                "sum", "unique"}


def _device_asserts(ctx: AuditContext, fn: HostFunc) -> None:
    """`assert (x > 0).all()`, `assert t.max() < n`: the assert waits for the GPU on every call."""
    for node in walk_local(fn.node):
        if not isinstance(node, ast.Assert):
            continue
        for call in ast.walk(node.test):  # only the test runs on every call; the message only on failure
            if not isinstance(call, ast.Call):
                continue
            name = canon(call.func, ctx.model.aliases)
            method = isinstance(call.func, ast.Attribute) and not name.startswith(("torch.", "math.", "np.")) and \
                call.func.attr in _DEVICE_VALUE and not isinstance(call.func.value, ast.Constant)
            if method or (name.startswith("torch.") and short(name) in _TORCH_VALUE and name.count(".") == 1):
                ctx.add("device_assert_sync", node, fn.qualname, evidence=ctx.text(node.test)[:160],
                        why=f"`assert {ctx.text(node.test)[:80]}` reads a GPU value ({ctx.text(call)[:60]}) on the "
                            "host: every call waits for the GPU to finish before the next launch can be queued")
                break


_MODE_FLAG = re.compile(r"causal|window|sliding|alibi", re.I)


def _backward_flags(ctx: AuditContext) -> None:
    """An autograd Function whose forward passes a mode flag (causal...) to a kernel and whose backward never
    reads it: the gradients are those of the other mode."""
    model = ctx.model
    for cls in model.classes:
        fwd, bwd = model.funcs.get(f"{cls}.forward"), model.funcs.get(f"{cls}.backward")
        if fwd is None or bwd is None or not model.reaches_launch(bwd.qualname):
            continue
        flags: dict[str, Launch] = {}
        for ln in fwd.launches:
            for key, arg in ln.keywords.items():
                if _MODE_FLAG.search(key) or any(_MODE_FLAG.search(n) for n in names_in(arg)):
                    flags.setdefault(key, ln)
        if not flags:
            continue
        seen = _reachable_names(model, bwd)
        if any(_MODE_FLAG.search(n) for n in seen):
            continue
        first = min(bwd.launches, key=lambda x: x.line) if bwd.launches else None
        key, ln = sorted(flags.items())[0]
        ctx.add("backward_ignores_flag", first.node if first else bwd.node, bwd.qualname,
                evidence=f"{ln.kernel}[...](..., {key}={ctx.text(ln.keywords[key])}) in forward; backward never "
                         f"reads it",
                why=f"{fwd.qualname} passes {key}={ctx.text(ln.keywords[key])} to {ln.kernel}, but {bwd.qualname} "
                    f"neither reads it back (ctx.{key.lower()}) nor passes it to its kernels: the backward always "
                    "computes one mode, so the gradients are wrong for the other value of the flag",
                fix=f"save it in forward (ctx.{key.lower()} = ...) and pass it to the backward kernels as the same "
                    "constexpr (or assert the one mode the backward supports)")


def _reachable_names(model: FileModel, fn: HostFunc) -> set[str]:
    """Names, attributes and keywords in fn and the in-file functions it reaches."""
    out: set[str] = set()
    todo, seen = [fn.qualname], {fn.qualname}
    while todo:
        f = model.funcs.get(todo.pop())
        if f is None:
            continue
        for n in walk_local(f.node):
            if isinstance(n, ast.Name):
                out.add(n.id)
            elif isinstance(n, ast.Attribute):
                out.add(n.attr)
            elif isinstance(n, ast.keyword) and n.arg:
                out.add(n.arg)
        for callee, _ in f.calls:
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return out


def _low_precision_partials(ctx: AuditContext, reader: HostReader, fn: HostFunc) -> None:
    """tl.atomic_add of a value cast to fp16/bf16 (directly, or through a dtype constexpr the launch sets to one)."""
    for ln in fn.launches:
        facts = ctx.facts.get(ln.kernel)
        if facts is None:
            continue
        bound = ln.bind(facts.decl.params)
        for a in facts.trace.accesses:
            if a.kind != "atomic_add":
                continue
            val = kw(a.node, "val", 1)
            low = (a.value is not None and a.value.dtype in ("fp16", "bf16"))
            if isinstance(val, ast.Call) and isinstance(val.func, ast.Attribute) and val.func.attr in ("to", "cast"):
                dt = kw(val, "dtype", 0)
                text = ctx.text(dt) if dt is not None else ""
                if isinstance(dt, ast.Name) and dt.id in bound:  # a dtype constexpr: what does the launch pass?
                    arg = bound[dt.id]
                    text = ctx.text(arg) + " " + " ".join(
                        ctx.text(v) for n in names_in(arg) for v in reader.value_before(fn, n, ln.line))
                low = low or bool(re.search(r"float16|bfloat16|\bhalf\b|fp16|bf16", text))
            if low:
                ctx.add("low_precision_partials", a.node, facts.decl.name,
                        why=f"{ctx.text(a.node)[:70]} adds partial sums across programs in 16 bits (the value is cast "
                            f"to fp16/bf16 for some launches, line {ln.line}): each addition rounds, so the total "
                            "of many rows loses digits")
