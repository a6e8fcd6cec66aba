"""The task sidecar: `<reference stem>.p2t.toml` beside an unchanged reference (references/task-format.md).

A KernelBench problem file or a user's model file must stay byte-for-byte unchanged, so the assistant's notes,
extra cases, size overrides, tolerances (each with a reason), dtypes and BYTES/FLOPS formulas live in this
file instead. Every tool reads it; an explicit tool argument wins over it. Parsed here, in the server, without
importing torch or running the reference: the reference's sizes are read from its AST.

TOML rather than a Python sidecar: it is data the server must check before any code runs, and the only formulas
(bytes, flops) are short expressions over the problem's sizes, checked here and evaluated in the worker.
"""

from __future__ import annotations

import ast
import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import value_recipes
from .errors import UsageError

SUFFIX = ".p2t.toml"
DOC = "references/task-format.md, section 'The task sidecar'"
DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
_ALIASES = {"fp32": "float32", "float": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16",
            "fp64": "float64", "double": "float64"}
PRESETS = ("tf32", "float32", "float16", "bfloat16", "float64")
TOP_KEYS = ("notes", "source", "dtypes", "sizes", "tolerances", "cases", "bench", "audit", "require", "budget",
            "target_gpus")
# What `require` may name: robustness kinds made part of the contract (worker/validation/cases.py REQUIRE_KINDS) and
# "all_triton" (no library compute beside the Triton kernels). strict=true on a tool means the four kinds.
REQUIRE = ("layouts", "empty", "nan", "extreme", "all_triton")
STRICT = REQUIRE[:4]
CASE_KEYS = ("name", "shape", "sizes", "dtype", "scale", "values", "hook")
TOL_KEYS = ("rtol", "atol", "preset", "reason")
BENCH_KEYS = ("bytes", "flops", "dtype", "sizes", "cases")
# Names a bytes/flops expression may use besides the reference's sizes; worker/benchmark/formulas.py defines the same set.
FORMULA_NAMES = ("inputs", "case", "numel", "nbytes", "prod", "sum", "min", "max", "len", "abs", "int", "float",
                 "ceil", "floor", "log2", "sqrt")


def _toml_loads(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads(text)
    try:  # Python 3.10: tomli if present, else tomlkit (a dependency already, for Codex's config)
        import tomli

        return tomli.loads(text)
    except ImportError:
        import tomlkit

        return tomlkit.parse(text).unwrap()


def _toml_error() -> tuple[type[Exception], ...]:
    errs: list[type[Exception]] = [ValueError]
    try:
        from tomlkit.exceptions import ParseError

        errs.append(ParseError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(errs)


def path_for(reference: Path) -> Path:
    """The sidecar's path for a reference: reference.py -> reference.p2t.toml beside it."""
    reference = Path(reference)
    return reference.with_name(reference.stem + SUFFIX)


def reference_for(sidecar: Path) -> Path:
    """The reference a sidecar belongs to: foo.p2t.toml -> foo.py."""
    return sidecar.with_name(sidecar.name[: -len(SUFFIX)] + ".py")


def read_table(path: Path) -> dict[str, Any]:
    """A sidecar's raw TOML table, unchecked (journal keys); FileNotFoundError when absent, ValueError when bad."""
    text = Path(path).read_bytes().decode("utf-8", errors="strict")
    try:
        return _toml_loads(text)
    except _toml_error() as e:
        raise ValueError(str(e)) from e


@dataclass
class Problem:
    """What the server can tell about a reference from its AST alone."""

    kernelbench: bool
    sizes: dict[str, int] = field(default_factory=dict)
    floats: dict[str, float] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)  # every module-level name bound by an assignment

    def knows(self, name: str) -> bool:
        """True when `name` (or `name[i]`, an element of an integer tuple) may be a module-level size."""
        return name in self.sizes or name.split("[")[0] in self.assigned


def read_problem(source: str) -> Problem:
    """Form and module-level integer sizes of a reference (no import; KernelBench keeps its sizes there)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Problem(kernelbench=False)
    names: set[str] = set()
    assigned: set[str] = set()
    sizes: dict[str, int] = {}
    floats: dict[str, float] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = const_value(node.value, {**sizes, **floats}) if node.value is not None else None
            for t in targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                    assigned.add(t.id)
                    if isinstance(node.value, ast.Tuple):  # kernel_size = (3, 3): sizes kernel_size[0], [1]
                        for i, el in enumerate(node.value.elts):
                            v = const_value(el, sizes)
                            if isinstance(v, int) and not isinstance(v, bool):
                                sizes[f"{t.id}[{i}]"] = v
                    if isinstance(value, bool) or value is None:
                        continue
                    if isinstance(value, int):
                        sizes[t.id] = value
                    elif isinstance(value, float):
                        floats[t.id] = value
    return Problem(kernelbench={"Model", "get_inputs"} <= names, sizes=sizes, floats=floats, assigned=assigned)


def const_value(node: ast.expr, known: dict[str, Any]) -> int | float | None:
    """The value of a constant arithmetic expression over literals and earlier constants (`dim = 2 * 1024`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = const_value(node.operand, known)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = const_value(node.left, known), const_value(node.right, known)
        if a is None or b is None:
            return None
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.FloorDiv: lambda: a // b if b else None, ast.Div: lambda: a / b if b else None,
               ast.Pow: lambda: a ** b if abs(b) < 64 else None, ast.Mod: lambda: a % b if b else None}
        fn = ops.get(type(node.op))
        return fn() if fn else None
    return None


@dataclass
class Sidecar:
    """A parsed, checked sidecar (tolerances without their reasons, ready for the tools)."""

    path: Path
    notes: str = ""
    source: str | None = None
    dtypes: list[str] | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    tolerances: dict[str, Any] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    cases: list[dict[str, Any]] = field(default_factory=list)
    bench: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)  # [audit]: audit/audit_table.py
    require: list[str] = field(default_factory=list)
    sizes_interpreter: dict[str, int] = field(default_factory=dict)
    budget: float | None = None  # seconds a CPU (interpreter) validation may take; 0 = no budget
    target_gpus: list[int] | None = None  # the GPUs a CPU validation compiles for (gpu_targets.py); None: sm_90

    def describe(self, used: list[str]) -> str:
        """One line for a report: which file, and which of its settings this call used."""
        return f"task sidecar {self.path.name}: " + ("; ".join(used) if used else "read (no settings in it for this call)")


def _where(path: Path, key: str) -> str:
    return f"{path.name}: {key}"


def _unknown(path: Path, table: str, keys: Any, allowed: tuple[str, ...]) -> None:
    for k in keys:
        if k not in allowed:
            near = difflib.get_close_matches(str(k), allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UsageError(f"{_where(path, table)}: unknown key {k!r}{hint}; allowed: {', '.join(allowed)} ({DOC})")


def dtype_name(value: Any, path: Path, key: str) -> str:
    """The canonical dtype name, or a UsageError naming the key."""
    if not isinstance(value, str):
        raise UsageError(f"{_where(path, key)}: dtype must be a string such as 'float32', got {value!r}")
    name = value.lower().removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name not in DTYPES:
        near = difflib.get_close_matches(name, DTYPES, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UsageError(f"{_where(path, key)}: unknown dtype {value!r}{hint}; use one of {', '.join(DTYPES)}")
    return name


def _sizes(raw: Any, path: Path, key: str, problem: Problem | None) -> dict[str, int]:
    if not isinstance(raw, dict):
        raise UsageError(f"{_where(path, key)} must be a table of name = integer, e.g. {{ batch_size = 16 }}")
    out: dict[str, int] = {}
    for name, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise UsageError(f"{_where(path, f'{key}.{name}')} must be a non-negative integer, got {v!r}")
        # Only a name the reference never binds is refused here; the worker checks the rest against the values.
        if problem is not None and not problem.knows(name):
            known = ", ".join(problem.sizes) or "none"
            near = difflib.get_close_matches(name, list(problem.sizes), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UsageError(f"{_where(path, f'{key}.{name}')}: the reference has no module-level integer {name!r}"
                             f"{hint}; it defines: {known}")
        out[name] = v
    return out


def _tolerances(raw: Any, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    if not isinstance(raw, dict):
        raise UsageError(f"{_where(path, 'tolerances')} must be a table per dtype, e.g. [tolerances.bfloat16] with "
                         "rtol, atol and reason")
    tols: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for dt, spec in raw.items():
        key = f"tolerances.{dt}"
        name = dtype_name(dt, path, key)
        if not isinstance(spec, dict):
            raise UsageError(f"{_where(path, key)} must be a table: rtol = ..., atol = ..., reason = \"...\"")
        _unknown(path, key, spec, TOL_KEYS)
        reason = spec.get("reason")
        if not isinstance(reason, str) or len(reason.strip()) < 8:
            raise UsageError(f"{_where(path, key)}: a tolerance needs a reason (reason = \"...\", a sentence: why "
                             "PyTorch's own result misses the default; see references/tolerances.md)")
        if "preset" in spec:
            if set(spec) & {"rtol", "atol"}:
                raise UsageError(f"{_where(path, key)}: give either preset or rtol/atol, not both")
            if spec["preset"] not in PRESETS:
                raise UsageError(f"{_where(path, key)}: preset {spec['preset']!r} unknown; use one of "
                                 f"{', '.join(PRESETS)}")
            tols[name] = spec["preset"]
        else:
            try:
                rtol, atol = float(spec["rtol"]), float(spec["atol"])
            except (KeyError, TypeError, ValueError):
                raise UsageError(f"{_where(path, key)}: needs rtol and atol (numbers >= 0), or preset = \"tf32\""
                                 ) from None
            if min(rtol, atol) < 0 or isinstance(spec["rtol"], bool) or isinstance(spec["atol"], bool):
                raise UsageError(f"{_where(path, key)}: rtol and atol must be numbers >= 0")
            tols[name] = {"rtol": rtol, "atol": atol}
        reasons[name] = reason.strip()
    return tols, reasons


def _cases(raw: Any, path: Path, key: str, problem: Problem | None) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise UsageError(f"{_where(path, key)} must be an array of tables: [[{key}]] with name and shape (or sizes "
                         "for a KernelBench reference)")
    out = []
    for i, c in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(c, dict):
            raise UsageError(f"{_where(path, where)} must be a table with name and shape (or sizes)")
        _unknown(path, where, c, CASE_KEYS)
        case: dict[str, Any] = {"name": str(c.get("name") or f"sidecar_{i}")}
        kb = problem is not None and problem.kernelbench
        if "shape" in c and "sizes" in c:
            raise UsageError(f"{_where(path, where)}: give shape (function-form reference) or sizes (KernelBench "
                             "reference), not both")
        if "shape" in c:
            if kb:
                raise UsageError(f"{_where(path, where)}: a KernelBench reference builds its inputs from module-level "
                                 "sizes; write sizes = { name = value, ... } instead of shape")
            shape = c["shape"]
            if isinstance(shape, dict):
                ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in shape.values())
            else:
                ok = isinstance(shape, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                      for v in shape)
            if not ok:
                raise UsageError(f"{_where(path, where)}: shape must be a list (or table) of non-negative integers, "
                                 f"got {shape!r}")
            case["shape"] = shape
        elif "sizes" in c or (kb and ("values" in c or "hook" in c)):
            if problem is not None and not problem.kernelbench:
                raise UsageError(f"{_where(path, where)}: sizes work for a KernelBench reference (module-level "
                                 "integers read by get_inputs); this reference takes shape = [...]")
            case["sizes"] = _sizes(c.get("sizes") or {}, path, f"{where}.sizes", problem)
        else:
            raise UsageError(f"{_where(path, where)}: needs " + ("sizes = { ... }" if kb else "shape = [...]"))
        if "dtype" in c:
            case["dtype"] = dtype_name(c["dtype"], path, f"{where}.dtype")
        if "scale" in c:
            if isinstance(c["scale"], bool) or not isinstance(c["scale"], (int, float)) or c["scale"] <= 0:
                raise UsageError(f"{_where(path, where)}: scale must be a positive number")
            case["scale"] = float(c["scale"])
        if "values" in c:
            case["values"] = _values(c["values"], path, f"{where}.values")
        if "hook" in c:
            hook = c["hook"]
            if not isinstance(hook, str) or not hook.endswith(".py") or "/" in hook or "\\" in hook:
                raise UsageError(f"{_where(path, where)}: hook must name a .py file beside the sidecar, e.g. "
                                 "hook = \"inputs.py\" (it defines edit(inputs, case) -> inputs)")
            if not (path.parent / hook).is_file():
                raise UsageError(f"{_where(path, where)}: hook file {hook} not found beside {path.name}")
            case["hook"] = str(path.parent / hook)
        out.append(case)
    names = [c["name"] for c in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"{_where(path, key)}: case names must be unique; repeated: {', '.join(dup)}")
    return out


def _values(raw: Any, path: Path, where: str) -> dict[str, str]:
    """{input name or position: recipe}, each recipe checked (value_recipes.py)."""
    if not isinstance(raw, dict) or not raw:
        raise UsageError(f"{_where(path, where)} must be a table of input -> recipe, e.g. values = {{ targets = "
                         "\"25% = -100\" }} (input names are the reference's parameter names, or positions \"0\", ...)")
    out = {}
    for name, recipe in raw.items():
        try:
            value_recipes.parse(recipe)
        except ValueError as e:
            raise UsageError(f"{_where(path, where)}.{name}: {e}") from None
        out[str(name)] = str(recipe)
    return out


def check_formula(expr: Any, path: Path, key: str, problem: Problem | None) -> str:
    """A bytes/flops expression over the reference's sizes, `inputs` and `case`; refused with the unknown name."""
    if isinstance(expr, bool) or not isinstance(expr, (str, int, float)):
        raise UsageError(f"{_where(path, key)} must be a number or an expression string, e.g. \"2 * M * N * K\"")
    text = str(expr)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise UsageError(f"{_where(path, key)}: {text!r} is not a Python expression ({e.msg})") from None
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    allowed = set(FORMULA_NAMES) | bound | (set(problem.sizes) | set(problem.floats) if problem else set())
    for n in ast.walk(tree):
        if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            raise UsageError(f"{_where(path, key)}: only plain arithmetic expressions are allowed")
        if isinstance(n, ast.Attribute) and n.attr.startswith("_"):
            raise UsageError(f"{_where(path, key)}: private attribute {n.attr!r} not allowed")
    unknown = sorted({(n.col_offset, n.id) for n in ast.walk(tree) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Load) and n.id not in allowed})
    if unknown and problem is not None:
        names = ", ".join(dict.fromkeys(repr(name) for _, name in unknown))
        sizes = ", ".join(list(problem.sizes) + list(problem.floats)) or "none"
        raise UsageError(f"{_where(path, key)}: unknown name {names} in {text!r}; use the reference's sizes "
                         f"({sizes}), inputs (the input list), case, or {', '.join(FORMULA_NAMES[2:])}")
    return text


def parse(text: str, path: Path, problem: Problem | None = None) -> Sidecar:
    """Check a sidecar's text against the reference's problem; every error names the file and the key."""
    try:
        raw = _toml_loads(text)
    except _toml_error() as e:
        raise UsageError(f"{path.name} is not valid TOML: {e} ({DOC})") from None
    _unknown(path, "top level", raw, TOP_KEYS)
    side = Sidecar(path=path)
    if "notes" in raw:
        if not isinstance(raw["notes"], str):
            raise UsageError(f"{_where(path, 'notes')} must be a string (use \"\"\"...\"\"\" for several lines)")
        side.notes = raw["notes"].strip()
    if "source" in raw:
        if not isinstance(raw["source"], str):
            raise UsageError(f"{_where(path, 'source')} must be a string (where the reference came from)")
        side.source = raw["source"]
    if "dtypes" in raw:
        if not isinstance(raw["dtypes"], list) or not raw["dtypes"]:
            raise UsageError(f"{_where(path, 'dtypes')} must be a non-empty list, e.g. [\"float32\", \"bfloat16\"]")
        side.dtypes = [dtype_name(d, path, "dtypes") for d in raw["dtypes"]]
    if "sizes" in raw:
        if problem is not None and not problem.kernelbench and raw["sizes"] and raw["sizes"] != {"interpreter": {}}:
            raise UsageError(f"{_where(path, 'sizes')}: size overrides work for a KernelBench reference (module-level "
                             "integers read by get_inputs); this reference takes [[cases]] with shape = [...]")
        sizes = dict(raw["sizes"]) if isinstance(raw["sizes"], dict) else raw["sizes"]
        if isinstance(sizes, dict) and isinstance(sizes.get("interpreter"), dict):
            # [sizes.interpreter]: sizes for Triton's CPU interpreter only; the GPU keeps the problem's full size
            side.sizes_interpreter = _sizes(sizes.pop("interpreter"), path, "sizes.interpreter", problem)
        side.sizes = _sizes(sizes, path, "sizes", problem)
    if "tolerances" in raw:
        side.tolerances, side.reasons = _tolerances(raw["tolerances"], path)
    if "cases" in raw:
        side.cases = _cases(raw["cases"], path, "cases", problem)
    if "require" in raw:
        side.require = parse_require(raw["require"], _where(path, "require"))
    if "budget" in raw:
        b = raw["budget"]
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 3600:
            raise UsageError(f"{_where(path, 'budget')} must be the seconds a validation under the interpreter may "
                             f"take, 0 (no budget) to 3600, e.g. budget = 300; got {b!r}")
        side.budget = float(b)
    if "bench" in raw:
        b = raw["bench"]
        if not isinstance(b, dict):
            raise UsageError(f"{_where(path, 'bench')} must be a table: [bench] with bytes, flops, dtype, sizes, cases")
        _unknown(path, "bench", b, BENCH_KEYS)
        for k in ("bytes", "flops"):
            if k in b:
                side.bench[k] = check_formula(b[k], path, f"bench.{k}", problem)
        if "dtype" in b:
            side.bench["dtype"] = dtype_name(b["dtype"], path, "bench.dtype")
        if "sizes" in b:
            side.bench["sizes"] = _sizes(b["sizes"], path, "bench.sizes", problem)
        if "cases" in b:
            side.bench["cases"] = _cases(b["cases"], path, "bench.cases", problem)
    if "target_gpus" in raw:
        from . import gpu_targets

        try:
            side.target_gpus = gpu_targets.parse(raw["target_gpus"])
        except ValueError as e:
            raise UsageError(f"{_where(path, 'target_gpus')}: {e}") from None
    if "audit" in raw:
        from .audit.audit_table import parse_audit

        side.audit = parse_audit(raw["audit"], path)
    return side


def parse_require(raw: Any, where: str) -> list[str]:
    """A checked `require` list (order kept, duplicates dropped)."""
    if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        raise UsageError(f"{where} must be a list of names among {list(REQUIRE)}, e.g. require = [\"layouts\", "
                         "\"empty\"]")
    bad = [k for k in raw if k not in REQUIRE]
    if bad:
        raise UsageError(f"{where}: {bad} not among {list(REQUIRE)} (layouts = non-contiguous inputs, empty = a zero "
                         "dim, nan = NaN/inf inputs, extreme = large magnitudes, all_triton = no library compute)")
    return list(dict.fromkeys(raw))


def merge_require(side: Sidecar | None, strict: bool, explicit: list[str] | None, used: list[str]) -> list[str]:
    """What the worker gets as args["require"]: the sidecar's list, an explicit one, and strict's four kinds."""
    out = list(side.require) if side is not None else []
    if side is not None and side.require:
        used.append("require " + ", ".join(side.require))
    out += parse_require(explicit, "require") if explicit else []
    if strict:
        out += list(STRICT)
    return list(dict.fromkeys(out))


def load(reference: Path, reference_source: str | None = None) -> Sidecar | None:
    """The checked sidecar of a reference, or None when it has none."""
    path = path_for(reference)
    if not path.is_file():
        return None
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path.name} is not valid UTF-8; save it as UTF-8") from None
    if reference_source is None:
        try:
            reference_source = Path(reference).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            reference_source = None
    problem = read_problem(reference_source) if reference_source is not None else None
    return parse(text, path, problem)


def _merge_tols(side: Sidecar, explicit: dict[str, Any] | None, used: list[str]) -> dict[str, Any] | None:
    if not side.tolerances:
        return explicit
    merged = dict(side.tolerances)
    merged.update(explicit or {})
    kept = [d for d in side.tolerances if d not in (explicit or {})]
    if kept:
        used.append("tolerances " + ", ".join(f"{d} ({side.reasons[d]})" for d in kept))
    return merged


def _merge_sizes(base: dict[str, int], explicit: dict[str, int] | None, used: list[str], label: str) -> \
        dict[str, int] | None:
    if not base:
        return explicit
    merged = {**base, **(explicit or {})}
    used.append(f"{label} " + ", ".join(f"{k}={v}" for k, v in merged.items()))
    return merged


def for_validation(side: Sidecar | None, *, dtypes: list[str] | None, cases: list[Any] | None,
                   tolerances: dict[str, Any] | None, sizes: dict[str, int] | None,
                   budget_s: float | None = None) -> tuple[dict[str, Any], list[str]]:
    """run_validation's dtypes, cases, tolerances, sizes and time budget: the sidecar's, explicit arguments on top."""
    out: dict[str, Any] = {"dtypes": dtypes, "cases": cases, "tolerances": tolerances, "sizes": sizes,
                           "budget_s": budget_s}
    used: list[str] = []
    if side is None:
        return out, used
    if budget_s is None and side.budget is not None:
        out["budget_s"] = side.budget
        used.append(f"budget {side.budget:g} s")
    if dtypes is None and side.dtypes:
        out["dtypes"] = list(side.dtypes)
        used.append("dtypes " + ", ".join(side.dtypes))
    if cases is None and side.cases:
        out["cases"] = [dict(c) for c in side.cases]
        used.append(f"{len(side.cases)} case(s) " + ", ".join(c["name"] for c in side.cases))
    out["tolerances"] = _merge_tols(side, tolerances, used)
    out["sizes"] = _merge_sizes(side.sizes, sizes, used, "sizes")
    # the sidecar's own [sizes] pins in effect (an explicit size wins): the verdict line names them (issue 48)
    out["sizes_sidecar"] = {k: v for k, v in side.sizes.items() if k not in (sizes or {})}
    if side.target_gpus is not None:
        out["target_gpus"] = list(side.target_gpus)
        used.append("target GPUs " + (", ".join(f"sm_{c}" for c in side.target_gpus) or "none"))
    if side.sizes_interpreter and sizes is None:  # explicit sizes win over both
        out["sizes_interpreter"] = dict(side.sizes_interpreter)
        used.append("interpreter-only sizes " + ", ".join(f"{k}={v}" for k, v in side.sizes_interpreter.items()))
    return out, used


def for_benchmark(side: Sidecar | None, *, dtype: str | None, cases: list[Any] | None,
                  sizes: dict[str, int] | None) -> tuple[dict[str, Any], list[str]]:
    """run_benchmark's dtype, cases, tolerances, sizes and bytes/flops formulas, explicit arguments on top."""
    out: dict[str, Any] = {"dtype": dtype, "cases": cases, "sizes": sizes, "tolerances": None, "bytes_expr": None,
                           "flops_expr": None}
    used: list[str] = []
    if side is None:
        return out, used
    if dtype is None:
        dt = side.bench.get("dtype") or (side.dtypes[0] if side.dtypes else None)
        if dt:
            out["dtype"] = dt
            used.append(f"dtype {dt}")
    if cases is None and side.bench.get("cases"):
        out["cases"] = [dict(c) for c in side.bench["cases"]]
        used.append(f"{len(out['cases'])} bench case(s)")
    out["tolerances"] = _merge_tols(side, None, used)
    out["sizes"] = _merge_sizes({**side.sizes, **side.bench.get("sizes", {})}, sizes, used, "sizes")
    if side.sizes_interpreter and sizes is None:  # where validation runs under the interpreter; never a GPU's size
        out["sizes_interpreter"] = dict(side.sizes_interpreter)
        used.append("interpreter-only sizes " + ", ".join(f"{k}={v}" for k, v in side.sizes_interpreter.items())
                    + " (the no-GPU estimate's fallback count point; the estimate is for the sizes above)")
    for k in ("bytes", "flops"):
        if side.bench.get(k):
            out[f"{k}_expr"] = side.bench[k]
            used.append(f"{k} = {side.bench[k]}")
    return out, used
