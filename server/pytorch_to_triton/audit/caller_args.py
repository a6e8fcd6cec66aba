"""What a test or benchmark of a Triton file is called with, and what it compares the entry's call with (issue 45,
part 3; server side, the AST only): of each pytest parametrization the smallest option, else the arguments of a call
of it in the file; the torch expression a test asserts the entry's result close to, when it is built from the
call's own arguments (it becomes the probes' reference).
"""

from __future__ import annotations

import ast
from typing import Any

from .names import dotted, int_literal


def refs(node: ast.AST) -> set[str]:
    """Every dotted name a node reads ('softmax', 'LayerNorm.apply', 'bench.run'), and each prefix of it."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            d = dotted(n)
            if d and not d.startswith("."):
                parts = d.split(".")
                out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return out



# ---- the reference a test compares with ------------------------------------------------------------------------
COMPARE = ("assert_close", "allclose", "assert_allclose", "assert_verbose_allclose", "assert_almost_equal")


def compared(fn: ast.FunctionDef, entries: set[str]) -> dict[str, Any]:
    """The torch result a test compares its call of an entry with, as an expression of that call's arguments:
    `y_tri = layer_norm(x, w_shape, weight, bias, eps)` ... `y_ref = F.layer_norm(x, w_shape, weight, bias, eps)`
    ... `assert torch.allclose(y_tri, y_ref, atol=1e-2, rtol=0)` gives {expr, args, keywords, rtol, atol}; {} when the
    test has no such pair (its reference reads other locals: then the probes judge without one)."""
    body = sorted((n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.Call))), key=lambda n: (n.lineno,
                                                                                                  n.col_offset))
    assigns = [(n.targets[0].id, n.value, n.lineno) for n in body if isinstance(n, ast.Assign)
               and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
    local = {name for name, _, _ in assigns} | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                                                and isinstance(n.ctx, ast.Store)}
    call = next(((name, v) for name, v, _ in assigns if isinstance(v, ast.Call) and dotted(v.func) in entries
                 and all(isinstance(a, (ast.Name, ast.Constant)) for a in [*v.args, *(k.value for k in v.keywords)])
                 and all(k.arg for k in v.keywords)), None)
    if call is None:
        return {}
    out, node = call
    args = [a.id if isinstance(a, ast.Name) else None for a in node.args]
    keywords = {k.arg: k.value.id for k in node.keywords if isinstance(k.value, ast.Name)}
    given = {a for a in args if a} | set(keywords.values())
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for cmp in (n for n in body if isinstance(n, ast.Call) and dotted(n.func).rsplit(".", 1)[-1] in COMPARE):
        if len(cmp.args) < 2 or not any(isinstance(a, ast.Name) and a.id == out for a in cmp.args[:2]):
            continue
        other = next(a for a in cmp.args[:2] if not (isinstance(a, ast.Name) and a.id == out))
        if isinstance(other, ast.Name):
            other = next((v for name, v, line in reversed(assigns) if name == other.id and line <= cmp.lineno),
                         None)
        if other is None:
            continue
        reads = {n.id for n in ast.walk(other) if isinstance(n, ast.Name)}
        if out in reads or not reads & given or reads & local - given - params or refs(other) & entries:
            continue
        tol = {k.arg: v for k in cmp.keywords if k.arg in ("rtol", "atol") and (v := _number(k.value)) is not None}
        return {"expr": ast.unparse(other), "args": args, "keywords": keywords, "line": cmp.lineno, **tol}
    return {}


def _number(node: ast.expr) -> float | None:
    try:
        v = ast.literal_eval(node)
    except ValueError:
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# ---- the arguments of a test or benchmark function --------------------------------------------------------------
def parameters(fn: ast.FunctionDef, tree: ast.Module) -> tuple[dict[str, str], str]:
    """(argument -> source of its value, why not usable): each pytest parametrization's smallest option, else the
    first call of the function in the file; arguments with defaults keep them."""
    params: dict[str, str] = {}
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call) and dotted(deco.func).endswith("parametrize") and len(deco.args) >= 2:
            params.update(_parametrize(deco, tree))
    args = fn.args.posonlyargs + fn.args.args
    required = [a.arg for a in args[:len(args) - len(fn.args.defaults)]]
    required += [a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is None]
    missing = [a for a in required if a not in params and a not in ("self", "cls")]
    if missing:
        site = _call_site(fn.name, tree, [a.arg for a in args])
        params.update({k: v for k, v in site.items() if k not in params})
        missing = [a for a in missing if a not in params]
    if missing:
        return params, (f"its argument{'s' if len(missing) > 1 else ''} {', '.join(missing)} come from no "
                        "parametrize, default or call in the file (pytest fixtures are not run)")
    return params, ""


def _parametrize(deco: ast.Call, tree: ast.Module) -> dict[str, str]:
    names_node, values = deco.args[0], deco.args[1]
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
    elif isinstance(names_node, (ast.List, ast.Tuple)):
        names = [e.value for e in names_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    else:
        return {}
    if isinstance(values, ast.Name):  # a module-level list of cases
        values = next((n.value for n in tree.body if isinstance(n, ast.Assign) and
                       any(isinstance(t, ast.Name) and t.id == values.id for t in n.targets)), values)
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
        src = ast.unparse(values)  # built at run time: the first option, which the worker evaluates
        one = f"list({src})[0]"
        return {names[0]: one} if len(names) == 1 else {n: f"{one}[{i}]" for i, n in enumerate(names)}
    options = [(_unwrap_param(e), _skipped(e)) for e in values.elts]
    best, _ = min(enumerate(options), key=lambda io: (io[1][1], _size(io[1][0]), "float32" not in
                                                        ast.unparse(io[1][0]), io[0]))[1]
    if len(names) == 1:
        return {names[0]: ast.unparse(best)}
    if isinstance(best, (ast.Tuple, ast.List)) and len(best.elts) == len(names):
        return {n: ast.unparse(e) for n, e in zip(names, best.elts)}
    return {n: f"({ast.unparse(best)})[{i}]" for i, n in enumerate(names)}


def _unwrap_param(e: ast.expr) -> ast.expr:
    """pytest.param(a, b, marks=...) -> (a, b)."""
    if isinstance(e, ast.Call) and dotted(e.func).endswith("param"):
        return e.args[0] if len(e.args) == 1 else ast.Tuple(elts=list(e.args), ctx=ast.Load())
    return e


def _skipped(e: ast.expr) -> bool:
    """An option marked skip, skipif or xfail: the last choice."""
    return isinstance(e, ast.Call) and any(m in ast.unparse(k.value) for k in e.keywords if k.arg == "marks"
                                           for m in ("skip", "xfail"))


def _size(e: ast.expr) -> int:
    """The product of the positive integer literals of an option: its size, to pick the smallest."""
    p = 1
    for n in ast.walk(e):
        v = int_literal(n)
        if v is not None and v > 0:
            p *= v
    return p


def _call_site(name: str, tree: ast.Module, params: list[str]) -> dict[str, str]:
    """The arguments of the first call of `name` in the file (the tutorials' `test_layer_norm(1151, 8192, ...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func) == name and \
                not any(isinstance(a, ast.Starred) for a in node.args):
            got = {p: ast.unparse(a) for p, a in zip(params, node.args)}
            got.update({k.arg: ast.unparse(k.value) for k in node.keywords if k.arg})
            return got
    return {}
