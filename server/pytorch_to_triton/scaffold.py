"""`pytorch-to-triton new`: scaffold a task folder from a KernelBench file or from `model.py:ClassName`.

Read from the AST only (the server never imports the user's code or torch). The problem file is copied
unchanged (KernelBench) or imported unchanged (a user's model); the assistant's settings go to the sidecar
(sidecar.py), and stage1.py..stage3.py get a ModelNew skeleton whose constructor matches the Model's, so the
validator can load the reference's weights into it. Nothing existing is overwritten unless force=True, which
first backs the file up as <name>.bak-<timestamp>.
"""

from __future__ import annotations

import ast
import json
import os
import re
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sidecar
from .errors import UsageError
from .workspace import Workspace, atomic_write

STAGES = {
    "stage1.py": ("Stage 1: a direct, correct translation (masks on every load/store, triton.cdiv grids, power-of-2 "
                  "blocks, fp32 accumulation, int64 offsets)", "references/stage1-naive.md"),
    "stage2.py": ("Stage 2: basic optimization (coalesced access, @triton.autotune keyed on the sizes, num_warps "
                  "matched to the block, fewer intermediates)", "references/stage2-basic.md"),
    "stage3.py": ("Stage 3: advanced (fusion, on-chip reuse, pipelining, stable reductions, tiling, persistent "
                  "kernels)", "references/stage3-advanced.md"),
}
_DTYPES = {"float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"}
_RESERVED = {"torch", "triton", "numpy", "pytorch_to_triton", "sys", "os", "pathlib", "reference", "stage1", "stage2",
             "stage3"}
_ITEM = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<dtype>[A-Za-z_]\w*)\s*\[(?P<dims>[^\]]*)\]\s*"
                   r"(?:\(\s*(?P<low>-?\d+)\s*,\s*(?P<high>-?\d+)\s*\))?$")
INPUTS_HELP = ('--inputs "x=float32[batch=8,dim=1024]; idx=int64[batch](0,1000); eps=1e-5": one item per forward '
               "argument, `name=dtype[dims]` for a tensor (a dim is a number, `name=number` to define a size the "
               "validator can override and shrink, or a size named earlier), an optional (low,high) range for "
               "integer tensors, or `name=<Python literal>` for a plain value")


@dataclass
class Scaffold:
    """What `new` made: the folder, the files written, backups and what to do next."""

    folder: Path
    kind: str
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self, root: Path) -> str:
        """Lines for the CLI and the MCP prompt."""
        rel = _rel(self.folder, root)
        lines = [f"task folder {rel} ({self.kind}):"]
        lines += [f"  wrote {_rel(p, root)}" for p in self.written]
        lines += [f"  kept {_rel(p, root)} (unchanged)" for p in self.kept]
        lines += [f"  backed up {_rel(p, root)}" for p in self.backups]
        if self.sizes:
            lines.append("  sizes: " + ", ".join(f"{k}={v}" for k, v in self.sizes.items()) +
                         " (the CPU interpreter's in reference.p2t.toml [sizes.interpreter]; every run's in [sizes] "
                         "or with sizes= on a call)")
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"next: fill {rel}/stage1.py, then run_validation(reference=\"{rel}/reference.py\", "
                     f"candidates=[\"{rel}/stage1.py\"]); notes, cases and tolerances go in "
                     f"{rel}/reference.p2t.toml, never in reference.py")
        return "\n".join(lines)


def _rel(p: Path, root: Path) -> str:
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def split_spec(source: str) -> tuple[str, str | None]:
    """'path/model.py:MLP' -> ('path/model.py', 'MLP'); a plain path -> (path, None)."""
    head, sep, tail = source.rpartition(":")
    if sep and head.endswith(".py") and tail:
        if not tail.isidentifier():
            raise UsageError(f"{source!r}: {tail!r} is not a class name; write path/to/model.py:ClassName")
        return head, tail
    return source, None


def _parse(path: Path, text: str) -> ast.Module:
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise UsageError(f"{path.name} does not parse (line {e.lineno}: {e.msg}); fix the file first") from None


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _params(fn: ast.FunctionDef | None) -> tuple[list[str], list[str], bool]:
    """(all positional names, the required ones, takes *args) without self."""
    if fn is None:
        return [], [], True
    args = [*fn.args.posonlyargs, *fn.args.args][1:]
    n_req = len(args) - len(fn.args.defaults)
    return [a.arg for a in args], [a.arg for a in args[:max(0, n_req)]], fn.args.vararg is not None


def _signature(fn: ast.FunctionDef | None) -> str:
    return ast.unparse(fn.args) if fn is not None else "self"


def _body_lines(text: str, fn: ast.FunctionDef) -> str:
    lines = text.splitlines()
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and len(fn.body) > 1:
        first = fn.body[1]  # drop the docstring
    start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])]) - 1
    return textwrap.dedent("\n".join(lines[start:fn.end_lineno]))


def _indent(text: str, n: int) -> str:
    return textwrap.indent(text, " " * n)


def _imports(text: str, tree: ast.Module) -> list[str]:
    return [ast.get_source_segment(text, n) or "" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]


def _header(stage: str, title: str) -> str:
    what, guide = STAGES[stage]
    return (f'"""{title}: {what}.\n\nGuide: the skill\'s {guide} (MCP resource p2t://{guide}).\nWrite the kernel(s) '
            "below, launch them from ModelNew.forward, then run_validation.\nReplace the scaffold's example kernel; keep ModelNew's constructor as it is (the "
            'validator loads\nthe reference\'s weights into it when the parameter names match).\n"""\n')


_KERNEL = '''

@triton.jit
def {name}_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Example shape of a kernel (an elementwise copy): replace the body with the computation.
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x, mask=mask)
'''


def _forward_stub(text: str, fwd: ast.FunctionDef | None, stage: str) -> str:
    orig = ""
    if fwd is not None:
        src = textwrap.dedent("\n".join(text.splitlines()[fwd.lineno - 1:fwd.end_lineno]))
        orig = "".join(f"        # {line}\n" if line.strip() else "        #\n" for line in src.splitlines())
        orig = "        # The reference's forward, for reading:\n" + orig
    return (f"    def forward({_signature(fwd)}):\n{orig}"
            f"        raise NotImplementedError(\"{stage} is a scaffold: write the Triton kernel and launch it here\")\n")


def _safe_name(s: str) -> str:
    s = re.sub(r"\W+", "_", s).strip("_").lower()
    return ("k_" + s if s[:1].isdigit() else s) or "task"


# ---- KernelBench ---------------------------------------------------------------------------------------------
def _kernelbench_stage(stage: str, text: str, tree: ast.Module, name: str) -> str:
    model = _classes(tree)["Model"]
    init, fwd = _method(model, "__init__"), _method(model, "forward")
    imports = _imports(text, tree)
    need = ["import torch", "import torch.nn as nn", "import triton", "import triton.language as tl"]
    # The reference's own imports first (the copied constructor may use them), then ours where missing.
    lines = [_header(stage, f"{stage} of {name}"), *imports, *(imp for imp in need if imp not in imports)]
    out = "\n".join(lines) + "\n" + _KERNEL.format(name=_safe_name(name)) + "\n\nclass ModelNew(nn.Module):\n"
    if init is not None:
        body = re.sub(r"super\(\s*Model\s*,\s*self\s*\)", "super()", _body_lines(text, init))
        glob = problem_globals_used(tree, init)
        warn = (f"        # It reads the problem's module-level {', '.join(glob)}: define them in this file (never "
                "import the reference).\n") if glob else ""
        out += (f"    def __init__({_signature(init)}):\n"
                "        # Model's constructor, copied: the same parameter names let the validator load its weights.\n"
                f"{warn}{_indent(body, 8)}\n\n")
    else:
        out += "    def __init__(self):\n        super().__init__()\n\n"
    return out + _forward_stub(text, fwd, stage)


def problem_globals_used(tree: ast.Module, fn: ast.FunctionDef) -> list[str]:
    """Module-level names of the problem (not imports) that a copied function reads: the copy must define them."""
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name != "Model":
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                defined.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    used = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return list(dict.fromkeys(u for u in used if u in defined and u not in local))


def _kernelbench(src: Path, text: str, tree: ast.Module) -> tuple[dict[str, int], list[str]]:
    classes = _classes(tree)
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if "Model" not in classes or "get_inputs" not in funcs:
        missing = [n for n, ok in (("class Model", "Model" in classes), ("def get_inputs()", "get_inputs" in funcs))
                   if not ok]
        raise UsageError(f"{src.name} is not a KernelBench problem (missing {' and '.join(missing)}); for your own "
                         "nn.Module pass path/to/model.py:ClassName with --inputs")
    notes = [] if "get_init_inputs" in funcs else ["no get_init_inputs(): Model() is built without arguments"]
    init = _method(classes["Model"], "__init__")
    glob = problem_globals_used(tree, init) if init is not None else []
    if glob:
        notes.append(f"Model.__init__ reads the problem's module-level {', '.join(glob)}: the stage files copy the "
                     "constructor, so define those names there")
    return sidecar.read_problem(text).sizes, notes


# ---- a user's model ------------------------------------------------------------------------------------------
@dataclass
class InputSpec:
    """One forward argument: a tensor (dtype, dims, range) or a plain Python value."""

    name: str
    dtype: str | None = None
    dims: list[str] = field(default_factory=list)
    low: int | None = None
    high: int | None = None
    value: Any = None


def parse_inputs(spec: str) -> tuple[list[InputSpec], dict[str, int]]:
    """Parse --inputs into items and the sizes they define (see INPUTS_HELP)."""
    items: list[InputSpec] = []
    sizes: dict[str, int] = {}
    for raw in [s.strip() for s in spec.split(";") if s.strip()]:
        m = _ITEM.match(raw)
        if m is None:
            name, eq, value = raw.partition("=")
            name = name.strip()
            if not eq or not name.isidentifier():
                raise UsageError(f"input spec item {raw!r} is not name=dtype[dims] or name=value; {INPUTS_HELP}")
            try:
                items.append(InputSpec(name, value=ast.literal_eval(value.strip())))
            except (ValueError, SyntaxError):
                raise UsageError(f"input spec item {raw!r}: {value.strip()!r} is neither dtype[dims] nor a Python "
                                 f"literal; {INPUTS_HELP}") from None
            continue
        dtype = m["dtype"].lower()
        dtype = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "half": "float16", "float": "float32",
                 "double": "float64", "long": "int64", "int": "int32"}.get(dtype, dtype)
        if dtype not in _DTYPES:
            raise UsageError(f"input {m['name']}: unknown dtype {m['dtype']!r}; use one of {', '.join(sorted(_DTYPES))}")
        dims: list[str] = []
        for d in [x.strip() for x in m["dims"].split(",") if x.strip()]:
            if re.fullmatch(r"\d+", d):
                dims.append(d)
            elif re.fullmatch(r"[A-Za-z_]\w*\s*=\s*\d+", d):
                k, v = (x.strip() for x in d.split("="))
                if k in sizes and sizes[k] != int(v):
                    raise UsageError(f"input {m['name']}: size {k} defined twice ({sizes[k]} and {v})")
                sizes[k] = int(v)
                dims.append(k)
            elif d.isidentifier():
                if d not in sizes:
                    raise UsageError(f"input {m['name']}: size {d!r} is used before it is defined; write {d}=<number> "
                                     "the first time it appears")
                dims.append(d)
            else:
                raise UsageError(f"input {m['name']}: dim {d!r} must be a number, name=number or a defined name")
        low, high = (int(m["low"]), int(m["high"])) if m["low"] is not None else (None, None)
        if low is not None and (dtype.startswith("float") or dtype == "bfloat16" or high <= low):
            raise UsageError(f"input {m['name']}: a (low,high) range needs an integer dtype and low < high")
        items.append(InputSpec(m["name"], dtype=dtype, dims=dims, low=low, high=high))
    names = [i.name for i in items]
    if len(set(names)) != len(names):
        raise UsageError(f"input spec names an argument twice: {names}")
    if not items:
        raise UsageError(f"--inputs is empty; {INPUTS_HELP}")
    return items, sizes


def _tensor_expr(item: InputSpec) -> str:
    shape = "(" + ", ".join(item.dims) + ("," if len(item.dims) == 1 else "") + ")"
    if item.dtype == "bool":
        return f"torch.rand({shape}) < 0.5"
    if item.dtype and (item.dtype.startswith("int") or item.dtype.startswith("uint")):
        lo, hi = (item.low, item.high) if item.low is not None else (0, 16)
        return f"torch.randint({lo}, {hi}, {shape}, dtype=torch.{item.dtype})"
    return f"torch.randn({shape}, dtype=torch.{item.dtype})"


def parse_init(spec: str | None, sizes: dict[str, int]) -> dict[str, str]:
    """--init "in_features=dim, out_features=4096" -> {name: Python source of the value}."""
    out: dict[str, str] = {}
    for raw in [s.strip() for s in re.split(r"[;,](?![^\[\(]*[\]\)])", spec or "") if s.strip()]:
        name, eq, value = (x.strip() for x in raw.partition("="))
        if not eq or not name.isidentifier():
            raise UsageError(f"--init item {raw!r} must be name=value (a Python literal or a size name)")
        if value in sizes:
            out[name] = value
            continue
        try:
            out[name] = repr(ast.literal_eval(value))
        except (ValueError, SyntaxError):
            raise UsageError(f"--init {name}: {value!r} is neither a Python literal nor a size defined in --inputs "
                             f"({', '.join(sizes) or 'none'})") from None
    return out


def _import_root(model: Path) -> tuple[Path, str]:
    """The sys.path entry and dotted module name that import a model file as its package does."""
    parts = [model.stem]
    d = model.parent
    while (d / "__init__.py").is_file():
        parts.insert(0, d.name)
        d = d.parent
    return d, ".".join(parts)


def _model_files(model: Path, cls_name: str, folder: Path, inputs: str | None, init: str | None, text: str,
                 tree: ast.Module) -> tuple[str, dict[str, str], dict[str, int], list[str]]:
    classes = _classes(tree)
    if cls_name not in classes:
        raise UsageError(f"{model.name} defines no top-level class {cls_name!r}; it defines: "
                         f"{', '.join(classes) or 'no classes'}")
    if not inputs:
        raise UsageError(f"{model.name}:{cls_name} needs an input spec for forward; {INPUTS_HELP}")
    cls = classes[cls_name]
    items, sizes = parse_inputs(inputs)
    fwd, ctor = _method(cls, "forward"), _method(cls, "__init__")
    f_all, f_req, f_var = _params(fwd)
    given = [i.name for i in items]
    notes: list[str] = []
    if fwd is None:
        notes.append(f"{cls_name}.forward is inherited: the input spec's order is used as given")
    else:
        missing = [p for p in f_req if p not in given]
        extra = [n for n in given if n not in f_all] if not f_var else []
        if missing or extra:
            raise UsageError(f"--inputs must name {cls_name}.forward's arguments ({', '.join(f_all)}): "
                             + "; ".join(x for x in (f"missing {', '.join(missing)}" if missing else "",
                                                     f"not arguments of forward: {', '.join(extra)}" if extra else "")
                                         if x))
        items.sort(key=lambda i: f_all.index(i.name) if i.name in f_all else len(f_all))
    init_vals = parse_init(init, sizes)
    i_all, i_req, i_var = _params(ctor)
    if ctor is not None:
        missing = [p for p in i_req if p not in init_vals]
        extra = [n for n in init_vals if n not in i_all] if not i_var else []
        if missing or extra:
            raise UsageError(f"--init must give {cls_name}.__init__'s arguments ({', '.join(i_all) or 'none'}): "
                             + "; ".join(x for x in (f"missing {', '.join(missing)}" if missing else "",
                                                     f"unknown {', '.join(extra)}" if extra else "") if x)
                             + ', e.g. --init "' + ", ".join(f"{p}=..." for p in i_req) + '"')
        ordered = [init_vals[p] for p in i_all if p in init_vals]
    else:
        if init_vals:
            raise UsageError(f"{cls_name} takes no constructor arguments (no __init__); drop --init")
        ordered = []
    root, dotted = _import_root(model.resolve())
    rel = os.path.relpath(root, folder.resolve())
    path_line = (f"_IMPORT_ROOT = str((Path(__file__).resolve().parent / {json.dumps(Path(rel).as_posix())})"
                 f".resolve())  # where {dotted} imports from\n"
                 "sys.path[:] = [_IMPORT_ROOT, *(p for p in sys.path if p != _IMPORT_ROOT)]  # first, every load\n")
    imp = f"from {dotted} import {cls_name}"
    top = dotted.split(".")[0]
    if top in _RESERVED:
        raise UsageError(f"{model.name} would be imported as {dotted!r}, which clashes with {top!r} (a library or a "
                         "task file); rename the file or its package")
    # A warm worker keeps modules between calls: re-read the model on every load of the reference, so an edited
    # model.py (or another task's model.py of the same name) is never served from an older import.
    purge = (f"for _name in [n for n in sys.modules if n == {top!r} or n.startswith({top + '.'!r})]:\n"
             "    del sys.modules[_name]\n")
    size_lines = "".join(f"{k} = {v}\n" for k, v in sizes.items())
    args = []
    for it in items:
        args.append(_tensor_expr(it) if it.dtype else repr(it.value))
    ref = (f'"""Reference for {cls_name} of {_rel_posix(model, folder)} (KernelBench form), written by '
           "`pytorch-to-triton new`.\n\n"
           f"{model.name} is imported unchanged; notes, cases and tolerances go in reference.p2t.toml.\n"
           f'Input spec: {inputs}\n"""\n\nimport sys\nfrom pathlib import Path\n\nimport torch\n\n{path_line}{purge}'
           f"{imp} as Model  # noqa: E402\n\n"
           "# Sizes as module-level integers: the validator overrides (sizes=) and shrinks them by name.\n"
           f"{size_lines}\n\ndef get_inputs():\n    return [{', '.join(args)}]\n\n\n"
           f"def get_init_inputs():\n    return [{', '.join(ordered)}]\n")
    stages = {}
    for stage in STAGES:
        stages[stage] = (_header(stage, f"{stage} of {cls_name}") +
                         f"\nimport sys\nfrom pathlib import Path\n\nimport torch\nimport triton\n"
                         f"import triton.language as tl\n\n{path_line}{imp}  # noqa: E402\n"
                         + _KERNEL.format(name=_safe_name(cls_name)) +
                         f"\n\nclass ModelNew({cls_name}):\n"
                         f"    # {cls_name}'s constructor and parameters, inherited: the validator loads the "
                         "reference's weights into them.\n\n" + _forward_stub(text, fwd, stage))
    return ref, stages, sizes, notes


def _rel_posix(p: Path, folder: Path) -> str:
    return Path(os.path.relpath(p.resolve(), folder.resolve())).as_posix()


# ---- the sidecar ---------------------------------------------------------------------------------------------
def _keeps(orig: dict[str, int], new: dict[str, int], first: str) -> bool:
    """Whether `new` keeps every order (a <= b) among the sizes of `orig` that are >= 2, and every divisibility that
    does not involve `first` (the batch-like size get_inputs reads first: its divisibilities are mostly chance)."""
    keys = [k for k, v in orig.items() if v >= 2]
    for a in keys:
        for b in keys:
            if a == b:
                continue
            if orig[a] <= orig[b] and new[a] > new[b]:
                return False
            if first not in (a, b) and orig[b] % orig[a] == 0 and new[b] % new[a]:
                return False
    return True


def odd_case(sizes: dict[str, int]) -> dict[str, int]:
    """The sizes of the sidecar's suggested "odd" case: one size moved to the largest odd value below its own that
    keeps the relations among the problem's sizes (issue 40: batch_size = 7, max_seqlen = 7 broke seq_len <=
    max_seqlen), the first size that has one; {} when none has."""
    if not sizes:
        return {}
    first = next(iter(sizes))
    for k, v in sizes.items():
        for cand in range(v - 1 if v % 2 == 0 else v - 2, max(2, v - 512), -2):
            if _keeps(sizes, {**sizes, k: cand}, first):
                return {k: cand}
    return {}


def sidecar_text(source: str, sizes: dict[str, int]) -> str:
    """The starting sidecar: provenance, a notes block to fill, the sizes found (commented: full size by default),
    as [sizes.interpreter], the table that pins the CPU interpreter only (issue 48: pins written as [sizes] for the
    CPU kept a GPU run off the full size)."""
    def key(k: str) -> str:  # kernel_size[0] is not a bare TOML key
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    size_lines = "".join(f"# {key(k)} = {v}\n" for k, v in sizes.items()) or \
        "# (no module-level integer sizes found)\n"
    odd = odd_case(sizes)
    if odd:
        case_hint = "# [[cases]]\n# name = \"odd\"\n# sizes = { " + ", ".join(f"{key(k)} = {v}" for k, v in odd.items()) \
            + " }\n"
    elif sizes:  # every odd value breaks an order or a divisibility among the sizes: a case to fill in instead
        case_hint = ("# [[cases]]\n# name = \"my_case\"\n# sizes = { " + key(next(iter(sizes))) + " = ... }   # the sizes "
                     "this case changes; the others stay the main case's\n")
    else:
        case_hint = "# [[cases]]\n# name = \"my_case\"\n# shape = [...]\n"
    return (
        "# Task sidecar of reference.py (format: references/task-format.md, \"The task sidecar\").\n"
        "# reference.py stays unchanged: your notes, cases, sizes and tolerances go here. Every tool reads this "
        "file;\n# an explicit tool argument wins over it.\n"
        f"source = {json.dumps(source)}\n"
        "# notes: your assumptions (which sizes can be 0, 1, odd or huge; dtypes in and out; contiguity; hidden\n"
        "# semantics such as eps or ignore_index). audit_kernel and the report show them.\n"
        'notes = """\n"""\n'
        '# dtypes = ["float32"]\n\n'
        "# Sizes for Triton's CPU interpreter only (module-level integers of reference.py): uncomment to choose them\n"
        "# (the automatic shrink starts from them). A GPU run keeps the problem's full size. Commented out, the\n"
        "# interpreter runs automatically shrunk sizes.\n"
        f"[sizes.interpreter]\n{size_lines}\n"
        "# Sizes for every run, the GPU's too (its full size is then not run, and the report says so):\n"
        "# [sizes]\n\n"
        "# Extra cases (KernelBench form: a case is a set of sizes):\n"
        f"{case_hint}\n"
        "# Every element may be off by the default tolerance plus 4x PyTorch's own error at that size; a margin beyond\n"
        "# that needs a reason (references/tolerances.md):\n"
        "# [tolerances.float32]\n# rtol = 1e-4\n# atol = 1e-4\n# reason = \"...\"  (references/tolerances.md)\n\n"
        "# Roofline formulas over the sizes (run_benchmark), e.g. bytes = \"4 * 2 * batch_size * dim\":\n"
        "# [bench]\n# bytes = \"...\"\n# flops = \"...\"\n"
    )


# ---- writing -------------------------------------------------------------------------------------------------
def _write_all(files: dict[Path, str], force: bool, result: Scaffold, root: Path) -> None:
    existing = [p for p, text in files.items() if p.exists() and p.read_text(encoding="utf-8", errors="replace")
                != text]
    if existing and not force:
        names = ", ".join(_rel(p, root) for p in existing)
        raise UsageError(f"refusing to overwrite {names}; edit the existing task, choose another folder, or pass "
                         "--force (each existing file is first backed up as <name>.bak-<timestamp>)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for p, text in files.items():
        if p.exists() and p.read_text(encoding="utf-8", errors="replace") == text:
            result.kept.append(p)
            continue
        if p.exists():
            bak = p.with_name(f"{p.name}.bak-{stamp}")
            p.replace(bak)
            result.backups.append(bak)
        atomic_write(p, text)
        result.written.append(p)


def scaffold(source: str, dest: str | None = None, *, inputs: str | None = None, init: str | None = None,
             force: bool = False, root: Path | str = ".", base: Path | str | None = None) -> Scaffold:
    """Make a task folder (reference.py, reference.p2t.toml, stage1-3.py) from a KernelBench file or model.py:Class;
    relative paths (and the default folder) are under `base` (the CLI: the shell's cwd), else under `root`."""
    ws = Workspace(root, base)
    path_s, cls_name = split_spec(source)
    src = ws.resolve(path_s, what="source")
    if src.suffix != ".py":
        raise UsageError(f"{src.name} is not a .py file; pass a KernelBench problem file or path/to/model.py:ClassName")
    text = ws.read_source(src, what="source")
    tree = _parse(src, text)
    default = _safe_name(cls_name) if cls_name else (src.parent.name if src.stem == "reference" else src.stem)
    folder = ws.resolve(dest, what="dest", must_exist=False) if dest else \
        (src.parent if src.stem == "reference" and not cls_name else ws.resolve(default, what="dest", must_exist=False))
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{_rel(folder, ws.root)} exists and is not a folder; pass another destination")
    files: dict[Path, str] = {}
    if cls_name is None:
        if inputs or init:
            raise UsageError("--inputs/--init are for a model.py:ClassName spec; a KernelBench file builds its own "
                             "inputs (get_inputs) and constructor arguments (get_init_inputs)")
        sizes, notes = _kernelbench(src, text, tree)
        result = Scaffold(folder=folder, kind="KernelBench problem", sizes=sizes, notes=notes)
        ref = folder / "reference.py"
        if ref.resolve() != src:
            files[ref] = text  # copied byte for byte: the problem file stays unchanged
        name = src.stem if src.stem != "reference" else folder.name
        for stage in STAGES:
            files[folder / stage] = _kernelbench_stage(stage, text, tree, name)
        files[sidecar.path_for(ref)] = sidecar_text(_rel(src, ws.root), sizes)
    else:
        ref_text, stages, sizes, notes = _model_files(src, cls_name, folder, inputs, init, text, tree)
        result = Scaffold(folder=folder, kind=f"nn.Module {cls_name} of {_rel(src, ws.root)}", sizes=sizes,
                          notes=notes)
        files[folder / "reference.py"] = ref_text
        for stage, body in stages.items():
            files[folder / stage] = body
        files[folder / ("reference" + sidecar.SUFFIX)] = sidecar_text(f"{_rel(src, ws.root)}:{cls_name}", sizes)
    _write_all(files, force, result, ws.root)
    if not any(p.name == "reference.py" for p in files):
        result.kept.insert(0, folder / "reference.py")
    return result
