"""What a file holds: its @triton.jit kernels, host functions, kernel launches and the call graph between them."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .names import canon, dotted, import_aliases, is_constexpr_annotation, kw, number, short, walk_local

# A kernel file's own tests and benchmarks (lightllm's test1(), test(); bench_*; main): not on the forward path.
_NOT_PRODUCT = re.compile(r"^_?(test|bench|benchmark|main|demo)(_|\d|$)|^_?bench")


@dataclass
class Launch:
    """One `kernel[grid](args...)` call in a host function."""

    kernel: str
    node: ast.Call
    grid: ast.expr
    func: str
    args: list[ast.expr]
    keywords: dict[str, ast.expr]

    @property
    def line(self) -> int:
        return self.node.lineno

    def bind(self, params: list[str]) -> dict[str, ast.expr]:
        """Kernel parameter -> the argument expression passed for it (positional up to the first *arg)."""
        out: dict[str, ast.expr] = {}
        for p, a in zip(params, self.args):
            if isinstance(a, ast.Starred):
                break
            out[p] = a
        out.update({k: v for k, v in self.keywords.items() if k in params})
        return out


@dataclass
class KernelDecl:
    """A @triton.jit function and its decorators."""

    name: str
    node: ast.FunctionDef
    autotune: ast.Call | None
    heuristics: bool
    params: list[str]
    constexprs: set[str]
    helper: bool = False  # called from another @triton.jit function, not launched
    no_specialize: set[str] = field(default_factory=set)  # @triton.jit(do_not_specialize=[...])
    origin: FileModel | None = None  # the file it is defined in, when imported from another one (imports.py)


@dataclass
class HostFunc:
    """A plain Python function or method (module level or in a class)."""

    qualname: str
    node: ast.FunctionDef
    cls: str | None
    params: list[str]
    launches: list[Launch] = field(default_factory=list)
    calls: list[tuple[str, ast.Call]] = field(default_factory=list)
    local_defs: dict[str, ast.FunctionDef] = field(default_factory=dict)


def _decorator_name(d: ast.expr, aliases: dict[str, str]) -> str:
    return canon(d.func if isinstance(d, ast.Call) else d, aliases)


def _launched_name(f: ast.expr) -> str:
    """The kernel name of a launch `kernel[grid](...)`, or of torch.library's `wrap_triton(kernel)[grid](...)`
    (capture_triton, its older name): how a triton_op launches (fairchem's fused_wigner.py); '' otherwise."""
    if not isinstance(f, ast.Subscript):
        return ""
    v = f.value
    if isinstance(v, ast.Call) and short(dotted(v.func)) in ("wrap_triton", "capture_triton") and len(v.args) == 1:
        v = v.args[0]
    return v.id if isinstance(v, ast.Name) else ""


def _is_jit(fn: ast.FunctionDef, aliases: dict[str, str]) -> bool:
    return any(short(_decorator_name(d, aliases)) == "jit" for d in fn.decorator_list)


class FileModel:
    """The parsed file with its kernels, host functions and launches; the source is never executed."""

    def __init__(self, source: str, filename: str, tree: ast.Module, imported: dict[str, KernelDecl] | None = None):
        """`imported`: kernels of other files this one imports (audit/imports.py), launched here as if local."""
        self.source, self.filename, self.tree = source, filename, tree
        self.aliases = import_aliases(tree)
        self.consts: dict[str, float] = {}
        self.assigns: dict[str, ast.expr] = {}
        self.kernels: dict[str, KernelDecl] = {}
        self.funcs: dict[str, HostFunc] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        # launches of this file's kernels made in a file that imports them (they are read as that file's own)
        self.borrowed: list[Launch] = []
        for node in tree.body:
            self._module_stmt(node)
        for name, decl in (imported or {}).items():
            self.kernels.setdefault(name, decl)
        for fn in self.funcs.values():
            self._scan_host(fn)
        for k in self.kernels.values():
            called = {dotted(c.func) for c in ast.walk(k.node) if isinstance(c, ast.Call)}
            for other in self.kernels.values():
                if other.name in called and other.name != k.name:
                    other.helper = True
        launched = {ln.kernel for f in self.funcs.values() for ln in f.launches}
        for k in self.kernels.values():
            if k.name in launched:
                k.helper = False

    # ---- module level ---------------------------------------------------------------------------
    def _module_stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.FunctionDef):
            self._function(node, None)
        elif isinstance(node, ast.ClassDef):
            self.classes[node.name] = node
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef):
                    self._function(sub, node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is None:
                return
            for t in targets:
                if isinstance(t, ast.Name):
                    self.assigns[t.id] = value
                    inner = value.args[0] if isinstance(value, ast.Call) and short(dotted(value.func)) == "constexpr" \
                        and value.args else value
                    v = number(inner)
                    if v is not None:
                        self.consts[t.id] = v
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` / interpreter switches: look inside both branches
            for sub in node.body + node.orelse:
                self._module_stmt(sub)
        elif isinstance(node, ast.Try):
            for sub in node.body:
                self._module_stmt(sub)

    def _function(self, fn: ast.FunctionDef, cls: str | None) -> None:
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        if _is_jit(fn, self.aliases):
            deco = [(_decorator_name(d, self.aliases), d) for d in fn.decorator_list]
            autotune = next((d for n, d in deco if short(n) == "autotune" and isinstance(d, ast.Call)), None)
            heur = any(short(n) == "heuristics" for n, _ in deco)
            consts = {a.arg for a in fn.args.args + fn.args.kwonlyargs if is_constexpr_annotation(a.annotation)}
            # Locals a kernel declares `BLOCK: tl.constexpr = 128` are compile-time too.
            consts |= {n.target.id for n in ast.walk(fn) if isinstance(n, ast.AnnAssign)
                       and isinstance(n.target, ast.Name) and is_constexpr_annotation(n.annotation)}
            nospec: set[str] = set()
            for n, d in deco:
                if short(n) == "jit" and isinstance(d, ast.Call):
                    names = kw(d, "do_not_specialize")
                    if isinstance(names, (ast.List, ast.Tuple)):
                        nospec |= {e.value for e in names.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            self.kernels[fn.name] = KernelDecl(fn.name, fn, autotune, heur, params, consts, no_specialize=nospec)
            return
        q = f"{cls}.{fn.name}" if cls else fn.name
        self.funcs[q] = HostFunc(q, fn, cls, params)

    # ---- host functions -------------------------------------------------------------------------
    def _scan_host(self, fn: HostFunc) -> None:
        for node in walk_local(fn.node):
            if isinstance(node, ast.FunctionDef):
                fn.local_defs[node.name] = node
        for node in ast.walk(fn.node):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            launched = _launched_name(f)
            if launched in self.kernels:
                fn.launches.append(Launch(launched, node, f.slice, fn.qualname, list(node.args),  # type: ignore
                                          {k.arg: k.value for k in node.keywords if k.arg}))
                continue
            target = self.resolve_call(node, fn)
            if target:
                fn.calls.append((target, node))

    def resolve_call(self, call: ast.Call, caller: HostFunc) -> str | None:
        """The in-file function a call reaches ('helper', 'Cls.forward' for Cls.apply), or None."""
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in self.funcs:
                return f.id
            if f.id in self.classes and f"{f.id}.__init__" in self.funcs:
                return f"{f.id}.__init__"
            return None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            owner = f.value.id
            if owner in ("self", "cls", "ctx") and caller.cls:
                owner = caller.cls
            if owner in self.classes:
                if f.attr == "apply" and f"{owner}.forward" in self.funcs:
                    return f"{owner}.forward"
                if f"{owner}.{f.attr}" in self.funcs:
                    return f"{owner}.{f.attr}"
        return None

    def helper_callers(self, kernel: str) -> set[str]:
        """Kernels that call the @triton.jit helper `kernel`, transitively."""
        out: set[str] = set()
        todo = [kernel]
        while todo:
            name = todo.pop()
            for k in self.kernels.values():
                if k.name not in out and k.name != kernel and name in self.kernel_calls(k):
                    out.add(k.name)
                    todo.append(k.name)
        return out

    def kernel_calls(self, k: KernelDecl) -> set[str]:
        """Names of the in-file kernels that kernel `k` calls."""
        return {dotted(c.func) for c in ast.walk(k.node) if isinstance(c, ast.Call)} & set(self.kernels)

    def callers_of(self, qualname: str) -> list[tuple[HostFunc, ast.Call]]:
        return [(f, c) for f in self.funcs.values() for q, c in f.calls if q == qualname]

    def forward_path(self) -> set[str]:
        """Host functions on the candidate's forward path: those that launch kernels, their callers, the
        forward/backward methods, and everything these call in the file (not the file's own tests, benchmarks or
        main: test, test1, test_x, bench*, main, demo)."""
        roots = {q for q, f in self.funcs.items() if (f.launches or short(q) in ("forward", "backward"))
                 and not _NOT_PRODUCT.match(short(q))}
        todo, seen = list(roots), set(roots)
        while todo:  # callers, transitively (a file's own test1() / bench() is not a caller on the forward path)
            for caller, _ in self.callers_of(todo.pop()):
                if caller.qualname not in seen and not _NOT_PRODUCT.match(short(caller.qualname)):
                    seen.add(caller.qualname)
                    todo.append(caller.qualname)
        todo = list(seen)
        while todo:  # and what they call
            for callee, _ in self.funcs[todo.pop()].calls:
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return {q for q in seen if not _NOT_PRODUCT.match(short(q))}

    def reaches_launch(self, qualname: str) -> bool:
        """Whether the function launches a kernel itself or through functions of the file it calls."""
        todo, seen = [qualname], {qualname}
        while todo:
            f = self.funcs.get(todo.pop())
            if f is None:
                continue
            if f.launches:
                return True
            for callee, _ in f.calls:
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return False

    def module_value(self, name: str) -> ast.expr | None:
        return self.assigns.get(name)

    def launches(self) -> list[Launch]:
        return [ln for f in self.funcs.values() for ln in f.launches] + self.borrowed

    def autotune_configs(self, k: KernelDecl) -> list[ast.Call]:
        """The triton.Config(...) calls the kernel's autotune lists, where they can be read statically."""
        if k.autotune is None:
            return []
        expr = kw(k.autotune, "configs", 0)
        return self._configs_of(expr, depth=0)

    def _configs_of(self, expr: ast.AST | None, depth: int) -> list[ast.Call]:
        if expr is None or depth > 4:
            return []
        if isinstance(expr, ast.Call) and short(dotted(expr.func)) == "Config":
            return [expr]
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [c for e in expr.elts for c in self._configs_of(e, depth + 1)]
        if isinstance(expr, ast.ListComp):
            return self._configs_of(expr.elt, depth + 1)
        if isinstance(expr, ast.Name):
            return self._configs_of(self.assigns.get(expr.id), depth + 1) or self._func_configs(expr.id, depth)
        if isinstance(expr, ast.Subscript):
            return self._configs_of(expr.value, depth + 1)
        if isinstance(expr, ast.IfExp):
            return self._configs_of(expr.body, depth + 1) + self._configs_of(expr.orelse, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._configs_of(expr.left, depth + 1) + self._configs_of(expr.right, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            return self._func_configs(expr.func.id, depth)
        return []

    def _func_configs(self, name: str, depth: int) -> list[ast.Call]:
        fn = self.funcs.get(name)
        if fn is None:
            return []
        out: list[ast.Call] = []
        for node in walk_local(fn.node):
            if isinstance(node, ast.Return):
                out += self._configs_of(node.value, depth + 1)
            elif isinstance(node, ast.Call) and short(dotted(node.func)) == "Config":
                out.append(node)
        # A config built inside a loop and appended appears both ways: keep each call once.
        seen: set[int] = set()
        return [c for c in out if not (id(c) in seen or seen.add(id(c)))]
