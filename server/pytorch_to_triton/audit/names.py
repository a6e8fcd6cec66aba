"""AST helpers shared by every check: dotted names through import aliases, literals, source excerpts."""

from __future__ import annotations

import ast
import math

# Canonical prefixes: whatever the file imports them as, `triton.language.load` reads as `tl.load`.
_CANON = {"triton.language": "tl", "torch.nn.functional": "F", "triton.language.extra.libdevice": "libdevice",
          "triton.language.extra.cuda.libdevice": "libdevice", "triton.language.math": "tl.math"}


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> canonical dotted name, from the file's imports (`import triton.language as tl`)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = _CANON.get(a.name, a.name)
                else:
                    root = a.name.split(".")[0]
                    out.setdefault(root, root)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out[a.asname or a.name] = _CANON.get(full, full)
    return out


def dotted(node: ast.AST) -> str:
    """Dotted text of a name or attribute chain ('x.stride'); '' for anything else."""
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else f".{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def canon(node: ast.AST, aliases: dict[str, str]) -> str:
    """Dotted name with the first part resolved through the import aliases ('language.load' -> 'tl.load')."""
    text = dotted(node)
    if not text or text.startswith("."):
        return text
    head, _, rest = text.partition(".")
    base = aliases.get(head, head)
    base = _CANON.get(base, base)
    return f"{base}.{rest}" if rest else base


def short(name: str) -> str:
    """Last part of a dotted name."""
    return name.rsplit(".", 1)[-1]


def kw(call: ast.Call, name: str, pos: int | None = None) -> ast.expr | None:
    """A call's argument by keyword, or by position when given."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    if pos is not None and len(call.args) > pos and not any(isinstance(a, ast.Starred) for a in call.args[:pos + 1]):
        return call.args[pos]
    return None


def number(node: ast.AST | None) -> float | None:
    """The value of a numeric literal, including -x, float('inf') and math.inf; None otherwise."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = number(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.Call) and dotted(node.func) == "float" and len(node.args) == 1:
        a = node.args[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            try:
                return float(a.value)
            except ValueError:
                return None
    if isinstance(node, ast.Attribute) and dotted(node) in ("math.inf", "float.inf", "torch.inf", "np.inf"):
        return math.inf
    if isinstance(node, ast.Attribute) and dotted(node) in ("math.pi",):
        return math.pi
    return None


def int_literal(node: ast.AST | None) -> int | None:
    """An integer literal (not bool)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def segment(source: str, node: ast.AST, limit: int = 160) -> str:
    """First line of a node's source text, for the evidence column."""
    text = ast.get_source_segment(source, node) or ""
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


def names_in(node: ast.AST) -> set[str]:
    """Every Name read inside a node."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def is_constexpr_annotation(ann: ast.AST | None) -> bool:
    """`tl.constexpr`, `triton.language.constexpr`, or the string "tl.constexpr"."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return "constexpr" in ann.value
    return ann is not None and "constexpr" in dotted(ann)


def walk_local(node: ast.AST):
    """ast.walk that does not enter nested function or class definitions (lambdas are entered)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
