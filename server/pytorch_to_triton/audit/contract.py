"""The contract an audit judges against: what the entry's callers give (issue 35; the tiers are tier_rules.py's).

Read, in this order, the first to say a thing wins:
1. the sidecar's `[audit] require` (robustness kinds the callers do give: "weight", "lastdim", "empty", "layouts"...)
   and `[audit] assume` (lines of contract the user states), then the sidecar's top-level `require`;
2. the harness's `CONTRACT = {"require": [...], "assume": [...]}` (a literal, read without running it);
3. the file itself, where neither says otherwise: the wrappers the entry reaches (asserts, `.contiguous()` calls,
   dtype asserts and casts, shape checks, an early return on empty input, grid dimensions 1 and 2 that cap a size at
   65535), its call sites in the same file (arguments passed `.contiguous()` or cast; a call of the entry that leaves
   out an optional argument makes the defaults probe contract: "defaults"), and its kernels' dots (an explicit IEEE
   precision makes fp32 accuracy part of the contract).
Everything else is the tool's default (tier_rules.DEFAULT_ASSUMED). Every P0/P1 and every robustness finding says
the contract it assumed in one line (`line`), so a user can dispute it in the sidecar.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import tier_rules as tr
from .names import dotted, kw, short
from .reach import reachable, roots
from .structure import _NOT_PRODUCT, FileModel, HostFunc

GRID_CAP = 65535  # CUDA's limit on grid dimensions 1 and 2 (dimension 0 goes to 2**31 - 1)
TORCH_DTYPES = ("float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8",
                "int16", "int32", "int64", "bool")
# Which default assumptions a probe's findings depend on (the "assumed:" line names these).
PROBE_KINDS = {"layout": ("layouts", "weight", "lastdim", "1d"), "sizes": ("structure", "empty"), "rows": ("empty",),
               "reference": ("precision",), "grad": ("precision", "upstream"), "magnitude": ("extreme",),
               "defaults": ("defaults",)}
MAX_ITEMS = 4
FLOATS = ("float16", "bfloat16", "float64")


@dataclass
class Contract:
    """What the callers give: lines of (what, why), the robustness kinds made contract, the example dtype the entry
    admits (None: the harness's), and where it came from."""

    items: list[tuple[str, str]] = field(default_factory=list)
    require: set[str] = field(default_factory=set)
    dtype: str | None = None
    source: str = "the tool's defaults"

    def line(self, probe: str = "", kind: str | None = None) -> str:
        """'assumed: weight contiguous (wrapper calls .contiguous()); rows <= 65535 (grid dim 1 of k)' for a finding
        of `probe` (or of robustness `kind`): the contract's own lines first, then the defaults it relies on."""
        parts = [f"{what} ({why})" for what, why in self.items[:MAX_ITEMS]]
        if len(self.items) > MAX_ITEMS:
            parts.append(f"+{len(self.items) - MAX_ITEMS} more")
        kinds = [kind] if kind else list(PROBE_KINDS.get(probe, ()))
        parts += [f"{tr.DEFAULT_ASSUMED[k]} (default)" for k in kinds if k in tr.DEFAULT_ASSUMED
                  and not tr.covers(self.require, k)]
        parts += [f"{tr.title(k)} given by callers (required)" for k in sorted(self.require)
                  if any(k == q or tr.PARENT.get(q) == k for q in kinds)]
        return "assumed: " + ("; ".join(dict.fromkeys(parts)) or "inputs as the example call makes them")

    def summary(self) -> list[str]:
        """Every line of the contract, for the report."""
        out = [f"{what} ({why})" for what, why in self.items]
        out += [f"{tr.DEFAULT_ASSUMED[k]} (default)" for k in tr.DEFAULT_ASSUMED if not tr.covers(self.require, k)]
        out += [f"{tr.title(k)}: given by callers (required)" for k in sorted(self.require)]
        return out


def infer(model: FileModel | None, entry: str | None, table: dict[str, Any] | None = None,
          harness: Path | None = None, top_require: list[str] | None = None) -> Contract:
    """The contract for auditing `model` through `entry` (module docstring: sidecar, harness, then the file)."""
    c = Contract()
    table = table or {}
    stated = [(a, "stated in [audit] assume") for a in table.get("assume", [])]
    req = list(table.get("require", [])) + [k for k in top_require or [] if k in tr.AUDIT_KINDS]
    if harness is not None:
        h = _harness_contract(harness)
        stated += [(a, f"stated in {harness.name}'s CONTRACT") for a in h.get("assume", [])]
        req += [k for k in h.get("require", []) if k in tr.AUDIT_KINDS]
    c.items += stated
    c.require |= set(req)
    if stated or req:
        c.source = "the sidecar / harness"
    if model is not None:
        _from_file(c, model, entry)
    return c


def for_source(source: str, entry: str | None, table: dict[str, Any] | None = None, harness: Path | None = None,
               top_require: list[str] | None = None) -> Contract:
    """infer() on a file's source (a file that does not parse: the stated contract and the defaults only)."""
    try:
        model: FileModel | None = FileModel(source, "<audit>", ast.parse(source))
    except (SyntaxError, ValueError):
        model = None
    return infer(model, entry, table, harness, top_require)


def _harness_contract(path: Path) -> dict[str, list[str]]:
    """The harness's CONTRACT literal ({} when absent or not a literal)."""
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CONTRACT" for t in node.targets):
            try:
                v = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(v, dict):
                out.update({k: [str(x) for x in v.get(k, [])] for k in ("require", "assume")
                            if isinstance(v.get(k), (list, tuple))})
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "NONCONTIGUOUS"
                                                  for t in node.targets) and \
                isinstance(node.value, ast.Constant) and node.value.value is True:
            # a task reference that declares non-contiguous inputs (task-format.md): run_validation's layouts are
            # contract, so the audit's are too (issue 45: one tier for both tools)
            out["require"] = [*out.get("require", []), "layouts"]
    return out


def harness_entry(path: Path | None) -> str | None:
    """The harness's ENTRY string, read without running it."""
    if path is None:
        return None
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRY" for t in node.targets) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    return None


# ---- reading the file ------------------------------------------------------------------------------------------
def _from_file(c: Contract, model: FileModel, entry: str | None) -> None:
    start = roots(model, entry)
    reached = reachable(model, start) if start else set(model.funcs) | set(model.kernels)
    wrappers = [model.funcs[q] for q in model.funcs if q in reached and model.reaches_launch(q)]
    dtypes: dict[str, list[str]] = {}
    for fn in wrappers:
        _wrapper(c, fn, dtypes)
        for ln in fn.launches:
            grid = ln.grid.elts if isinstance(ln.grid, ast.Tuple) else []
            for i, e in enumerate(grid[1:3], 1):
                if not isinstance(e, ast.Constant):
                    c.items.append((f"{ast.unparse(e)} <= {GRID_CAP}", f"grid dim {i} of {ln.kernel}"))
        for caller, call in model.callers_of(fn.qualname):
            _call_site(c, fn, caller, call)
    if start:
        _defaults_used(c, model, start[0])
    _sum_backward(c, model)
    for k in model.kernels.values():
        asked = [_ieee(n) for n in ast.walk(k.node) if isinstance(n, ast.Call) and short(dotted(n.func)) == "dot"]
        if k.name in reached and any(asked):
            c.require.add("precision")
            how = " or ".join(dict.fromkeys(a for a in asked if a))  # tf32x3 is near-fp32 accuracy, not IEEE
            c.items.append((f"fp32 dots at fp32 accuracy ({how})", f"{k.name} asks for it"))
            break
    c.items = list(dict.fromkeys(c.items))
    # The example's dtype follows the contract only for the entry's own first argument, a floating tensor the
    # harness makes in case.dtype (an integer dtype would break a harness that draws floats in it).
    head = model.funcs.get(start[0]) if start else None
    first = next((p for p in head.params if p not in ("self", "ctx", "cls")), None) if head else None
    admits = dtypes.get(first or "", [])
    if admits and "float32" not in admits and admits[0] in FLOATS:
        c.dtype = admits[0]
    if c.items and c.source == "the tool's defaults":
        c.source = "the file's wrappers and call sites"


def _sum_backward(c: Contract, model: FileModel) -> None:
    """Code in the file that differentiates a sum (`out.sum().backward()`, `torch.autograd.grad(y.sum(), ...)`) hands
    a backward the expanded, stride-0 output gradient: the grad probe's out.sum() variant is then its callers' input
    (contract, "upstream"); otherwise a backward that reads it as dense is robustness (issue 45)."""
    for node in ast.walk(model.tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        summed = isinstance(f, ast.Attribute) and f.attr == "backward" and _is_sum(f.value)
        summed = summed or (short(dotted(f)) == "grad" and bool(node.args) and _is_sum(node.args[0]))
        if summed:
            c.require.add("upstream")
            c.items.append(("output gradients expanded (stride 0)", f"line {node.lineno} differentiates a sum"))
            return


def _is_sum(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "sum"


def _defaults_used(c: Contract, model: FileModel, entry: str) -> None:
    """The file's own callers (not its tests, benchmarks or main) call the entry without an optional argument: the
    defaults probe's input is theirs (contract, "defaults"); otherwise calling it so is robustness (issue 35)."""
    fn = model.funcs.get(entry)
    if fn is None or not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    a = fn.node.args
    pos = [x.arg for x in a.posonlyargs + a.args]
    optional = pos[len(pos) - len(a.defaults):] if a.defaults else []
    optional += [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    if fn.cls is not None and pos[:1] in (["self"], ["cls"]):
        pos = pos[1:]
    for caller, call in model.callers_of(entry):
        if _NOT_PRODUCT.match(short(caller.qualname)) or any(isinstance(x, ast.Starred) for x in call.args) or \
                any(k.arg is None for k in call.keywords):
            continue  # *args / **kwargs: what it passes is not read here
        given = set(pos[:len(call.args)]) | {k.arg for k in call.keywords if k.arg}
        left = [o for o in optional if o not in given]
        if left:
            c.require.add("defaults")
            c.items.append((f"{short(entry)} called without {', '.join(left)}",
                            f"{short(caller.qualname)} calls it so, line {call.lineno}"))
            return


def _ieee(call: ast.Call) -> str:
    """The fp32-accuracy precision a tl.dot asks for ("ieee", "tf32x3", or "ieee" for allow_tf32=False), else ""."""
    prec = kw(call, "input_precision")
    tf32 = kw(call, "allow_tf32")
    if isinstance(prec, ast.Constant) and prec.value in ("ieee", "tf32x3"):
        return str(prec.value)
    return "ieee" if isinstance(tf32, ast.Constant) and tf32.value is False else ""


def _wrapper(c: Contract, fn: HostFunc, dtypes: dict[str, list[str]]) -> None:
    params = set(fn.params) - {"self", "ctx", "cls"}
    who = f"{short(fn.qualname)}"
    for node in ast.walk(fn.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "contiguous" \
                and dotted(node.func.value) in params:
            c.items.append((f"{dotted(node.func.value)} contiguous", f"{who} calls .contiguous()"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and dotted(node.func.value) in params \
                and (node.func.attr in ("float", "half", "bfloat16") or (node.func.attr == "to" and node.args and
                                                                          _dtype(node.args[0]))):
            to = {"float": "float32", "half": "float16", "bfloat16": "bfloat16"}.get(node.func.attr) or \
                _dtype(node.args[0])
            c.items.append((f"{dotted(node.func.value)} any dtype", f"{who} casts it to {to}"))
        elif isinstance(node, ast.Assert):
            _condition(c, node.test, params, f"{who} asserts it", dtypes)
        elif isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise):
            _condition(c, _negate(node.test), params, f"{who} raises otherwise", dtypes)
        elif isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Return) and _empty_test(node.test):
            c.require.add("empty")
            c.items.append(("empty input handled", f"{who} returns early on it"))


def _condition(c: Contract, test: ast.expr, params: set[str], why: str, dtypes: dict[str, list[str]]) -> None:
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    if not names & params:
        return
    text = ast.unparse(test)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and dotted(test.left).endswith(".dtype"):
        who = dotted(test.left).removesuffix(".dtype")
        right = test.comparators[0]
        got = [_dtype(e) for e in (right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right])]
        got = [g for g in got if g]
        if got and isinstance(test.ops[0], (ast.Eq, ast.In)):
            dtypes.setdefault(who, got)
            c.items.append((f"{who} {' or '.join(got)}", why))
            return
    c.items.append((text[:80], why))


_INVERSE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _negate(test: ast.expr) -> ast.expr:
    """The condition an `if test: raise` guarantees, written plainly (`x.dim() == 2` for `if x.dim() != 2`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _INVERSE:
        return ast.Compare(test.left, [_INVERSE[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


def _empty_test(test: ast.expr) -> bool:
    """`x.numel() == 0`, `n == 0`, `not x.numel()`, `x.shape[0] == 0`."""
    if isinstance(test, ast.BoolOp):
        return any(_empty_test(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return "numel" in ast.unparse(test.operand)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.LtE)) and \
        isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0


def _call_site(c: Contract, fn: HostFunc, caller: HostFunc, call: ast.Call) -> None:
    params = [p for p in fn.params if p not in ("self", "ctx", "cls")]
    for p, a in list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg in params]:
        if isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute):
            if a.func.attr == "contiguous":
                c.items.append((f"{p} contiguous", f"{short(caller.qualname)} passes .contiguous()"))
            elif a.func.attr == "to" and a.args and _dtype(a.args[0]):
                c.items.append((f"{p} {_dtype(a.args[0])}", f"{short(caller.qualname)} passes .to(...)"))


def _dtype(e: ast.expr) -> str | None:
    name = short(dotted(e)) if isinstance(e, (ast.Attribute, ast.Name)) else ""
    aliases = {"float": "float32", "half": "float16", "double": "float64"}
    name = aliases.get(name, name) if isinstance(e, ast.Attribute) else name
    return name if name in TORCH_DTYPES else None
