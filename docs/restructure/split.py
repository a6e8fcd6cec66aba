#!/usr/bin/env python3
"""Issue 39, step 2, re-runnable: the worker's long files split along their ideas, by moving whole definitions.

Run from the repository root AFTER restructure.py (it works on the rooms' paths):

    python3 docs/restructure/split.py            # apply, then a self-check
    python3 docs/restructure/split.py --dry-run  # what would move where, change nothing

Every step of SPLITS moves named definitions out of one file, by NAME (never by line number, so a file that other
branches edited meanwhile still splits): top-level functions, classes and constants, and methods of one class,
which land in a mixin class the original class then inherits (`class Prober(LayoutProbes, ...)`): no line inside a
definition changes, `self.` calls and method names stay as they were. For each step it:
1. finds the names the moved code uses from the source's top level: an import is copied (relative imports made
   relative to the new file), a name moved by an earlier step is imported from there, a name that stays in the source
   and is used only in annotations is imported under `if TYPE_CHECKING:`; one used at run time REFUSES the step (the
   new file would import its source: a circle), so the spec must move it too;
2. writes the new file (its docstring, the imports, the definitions in their order), or appends to an existing one;
3. cuts the definitions out of the source, imports back what the source still uses, adds the mixin to the class;
4. repoints every `from <source> import <moved name>` in server/, tests/, benchmarks/, examples/ to the new file;
   rewrites `<source>.<moved name>` in comments, docstrings and docs; the same in code is a problem (exit 3).
Then `ruff check --fix --select I,F401` on the files it touched, and a self-check: every `from pytorch_to_triton...
import X` in the repository finds X in that module; no file imports a module that imports it back at run time.

Idempotent: a step whose names are all gone from the source and present in the destination is done (skipped).
Exit codes: 0 done, 2 refused before any change (a name in neither place, or a run-time use that stays behind),
3 the self-check failed after the change (`git checkout . && git clean -fd` undoes it).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import restructure  # noqa: E402 - beside this file: resolve/relative imports, README's "Where things are"

WORKER = Path("server/pytorch_to_triton/worker")
CODE_DIRS = ("server/", "tests/", "benchmarks/", "examples/")
FROZEN = ("benchmarks/results/", "benchmarks/trials/", "tests/audit_public_corpus/", "docs/.triton_docs/",
          "docs/ASSISTANT_TRANSCRIPT.md", "docs/restructure/")
TEXT_EXT = {".py", ".md", ".sh", ".toml", ".txt"}

_PROBER_ATTRS = ("Uses the Prober's state (self.fn, self.ref, self.shape, self.dtype, self.only, self.emit, ...) and "
                 "its core methods (call, judge, fail, wanted): a mixin of probes.Prober, never used alone.")
_VALIDATOR_ATTRS = ("Uses the Validator's state (self.device, self.args, self.case, self.notes) and its methods "
                    "(find, _reference, _candidate, _candidate_error, _harness_oom): a mixin of validate.Validator, "
                    "never used alone.")

# Each step: src -> dest (paths under worker/), `names` = top-level definitions, `mixin` = methods of one class.
SPLITS: list[dict] = [
    # ---- probe/probes.py (1.2k lines: the op, what a call did, six probe families, gradients, the entry) ---------
    {"src": "probe/probes.py", "dest": "probe/outcome.py",
     "row": "what one probe call did (Outcome, Probe) and the rules that judge it",
     "doc": "What one probe call did and the rules that judge it: a refusal or a crash, an operator this environment "
            "lacks, the outcome (outputs, error, out-of-bounds accesses), one probe's record, non-finite values and "
            "mismatches against the reference.",
     "names": ["REFUSALS", "refused", "missing_op", "_raised_in", "_in_triton", "Poisoned", "DEFAULT_BUDGET_S",
               "Outcome", "Probe", "_cuda_usable", "_tensors", "_finite_inputs", "_nonfinite", "_mismatch",
               "_mismatch_each"]},
    {"src": "probe/probes.py", "dest": "probe/entry.py",
     "row": "the audited entry, its module and line, the example's shape",
     "doc": "The audited entry and its module: which function the probes call, its line in the file, the example's "
            "shape, and the compiled kernels forgotten between runs.",
     "names": ["_entry_module", "_forget_compiled", "_entry_line", "_entry", "_example_shape", "_value_order"]},
    {"src": "probe/probes.py", "dest": "probe/shape_probes.py",
     "row": "LayoutProbes (mixin of Prober): layout, rows, sizes probes",
     "doc": "The probes that change where and how many values the entry sees: layouts (non-contiguous copies, one "
            "tensor at a time), rows (prefixes of the batch), sizes around block boundaries, parity notes.",
     "mixin": {"class": "Prober", "name": "LayoutProbes", "doc": _PROBER_ATTRS,
               "methods": ["_layout", "_layout_try", "_weight_aside", "_rows", "_reference_couples_rows", "_sizes",
                           "_parity_only"]}},
    {"src": "probe/probes.py", "dest": "probe/value_probes.py",
     "row": "ValueProbes (mixin of Prober): sentinel, magnitude, dtype, defaults, reference",
     "doc": "The probes that change the values the entry sees: its sentinels, magnitudes, bfloat16, its own "
            "defaults, the harness's reference, and IEEE dots for an fp32 difference.",
     "mixin": {"class": "Prober", "name": "ValueProbes", "doc": _PROBER_ATTRS,
               "methods": ["_sentinel", "_magnitude", "_magnitude_variants", "_dtype", "_defaults",
                           "_defaults_judge", "_reference", "_ieee_dots"]}},
    {"src": "probe/probes.py", "dest": "probe/grad_probes.py",
     "row": "GradProbes (mixin of Prober): an autograd Function's backward",
     "doc": "The grad probe: an entry with its own backward (an autograd Function) against the harness's "
            "reference's autograd, random and `out.sum()` output gradients.",
     "names": ["_custom_backward"],
     "mixin": {"class": "Prober", "name": "GradProbes", "doc": _PROBER_ATTRS,
               "methods": ["_grad", "_grad_compare", "_grads"]}},
    # ---- benchmark/bench.py (651: timing, and this device's environment, peaks and plausibility) ---------------
    {"src": "benchmark/bench.py", "dest": "benchmark/peaks.py",
     "row": "this GPU: environment, measured peaks, roofline floor, implausible timings",
     "doc": "This device: its environment (GPU, driver, clocks), its measured peaks (copy, read, bf16 matmul) and "
            "the do_bench call they come from, the roofline floor they set, and the flags of an implausible or "
            "host-bound timing.",
     "retype": {"Emit": "Callable[..., None]"},
     "names": ["ROOFLINE_MARGIN", "_peak_flops", "roofline_floor_ms", "plausibility_flags", "_sync", "_nvidia_smi",
               "environment", "_reset_l2_persistence", "_bench", "_host_ms_per_call", "_host_bound_flags",
               "measure_peaks", "peaks_key", "_median_of"]},
    # ---- validation/validate.py (739: one case's run; the output checks and the gradients are ideas apart) ---
    {"src": "validation/validate.py", "dest": "device/runtime.py",
     "names": ["_sync"]},
    {"src": "validation/validate.py", "dest": "validation/output_checks.py",
     "row": "OutputChecks (mixin of Validator): outputs vs the reference, stale results",
     "doc": "The checks of one case's outputs against the reference: count, shape, dtype and device, values within "
            "the tolerances (widened to PyTorch's own error), unwritten elements, two runs that differ, stale "
            "results, and outputs so small that the absolute tolerance alone would pass a constant.",
     "retype": {"Validator": "OutputChecks"},
     "names": ["_as_tensor", "SMALL_OUTPUT_FACTOR", "SMALL_OUTPUT_MIN_ELEMS", "_finite_amax", "check_small_outputs"],
     "mixin": {"class": "Validator", "name": "OutputChecks", "doc": _VALIDATOR_ATTRS,
               "methods": ["_native_note", "_compare_outputs", "_stale_checks"]}},
    {"src": "validation/validate.py", "dest": "validation/gradients.py",
     "row": "Gradients (mixin of Validator): input gradients vs the float64 reference",
     "doc": "The gradients of one case: the candidate's input gradients against the float64 reference's, the same "
            "upstream gradient on both sides.",
     "mixin": {"class": "Validator", "name": "Gradients", "doc": _VALIDATOR_ATTRS,
               "methods": ["run_gradients"]}},
]
# Judged and left whole (one idea each): validation/kernelbench.py (617: the KernelBench form), validation/cases.py
# (the one home of invented inputs). validate.py keeps the case memory estimate: tests patch its module-level cache.


class Refused(Exception):
    pass


def log(msg: str) -> None:
    print(msg, flush=True)


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return sorted({p for p in out.split("\0") if p and Path(p).is_file()})


def module_name(path: Path) -> str:
    parts = list(path.relative_to("server").with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_name(path: Path) -> str:
    mod = module_name(path)
    return mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]


resolve = restructure.resolve  # the dotted module a `from <dots><module> import` names (level >= 1)


def relative(from_pkg: str, target: str) -> str:
    """`from <this> import` text that names target from inside from_pkg."""
    level, module = restructure.relative(from_pkg, target)
    return "." * level + module


# ---- reading a module's top level ----------------------------------------------------------------------------------
def defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def import_bindings(tree: ast.Module) -> dict[str, tuple[ast.stmt, ast.alias]]:
    """name -> (import statement, alias) for the module's top-level imports (and those under TYPE_CHECKING)."""
    out: dict[str, tuple[ast.stmt, ast.alias]] = {}
    stmts = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stmts += node.body
    for node in stmts:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    continue
                out[a.asname or a.name.split(".")[0]] = (node, a)
    return out


def span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) lines of a definition with its decorators and the comment lines right above it."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    while start > 0 and lines[start - 1].strip().startswith("#") and \
            len(lines[start - 1]) - len(lines[start - 1].lstrip()) == indent:
        start -= 1
    return start, node.end_lineno


def names_used(nodes: list[ast.AST]) -> tuple[set[str], set[str]]:
    """(names read at run time, names read only inside annotations) by the given definitions."""
    run, ann = set(), set()

    def visit(n: ast.AST, in_ann: bool) -> None:
        if isinstance(n, ast.Name):
            (ann if in_ann else run).add(n.id)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                visit(d, False)
            for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs + [n.args.vararg, n.args.kwarg]:
                if a is not None and a.annotation is not None:
                    visit(a.annotation, True)
            for d in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                visit(d, False)
            if n.returns is not None:
                visit(n.returns, True)
            for s in n.body:
                visit(s, False)
            return
        if isinstance(n, ast.AnnAssign):
            visit(n.annotation, True)
            visit(n.target, in_ann)
            if n.value is not None:
                visit(n.value, in_ann)
            return
        for c in ast.iter_child_nodes(n):
            visit(c, in_ann)

    for n in nodes:
        visit(n, False)
    return run, ann - run


# ---- one step --------------------------------------------------------------------------------------------------
class Step:
    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.src = WORKER / spec["src"]
        self.dest = WORKER / spec["dest"]
        self.names: list[str] = list(spec.get("names", []))
        mx = spec.get("mixin")
        self.mixin: dict | None = mx
        self.methods: list[str] = list(mx["methods"]) if mx else []

    @property
    def moved(self) -> list[str]:
        """The top-level names the destination provides to others (the mixin class counts as one)."""
        return self.names + ([self.mixin["name"]] if self.mixin else [])

    def label(self) -> str:
        return f"{self.spec['src']} -> {self.spec['dest']}"

    def state(self) -> str:
        """'todo', 'done', or a problem (refusal)."""
        if not self.src.exists():
            return f"{self.src}: no such file (run restructure.py first)"
        tree = ast.parse(self.src.read_text())
        top = {defined_name(n): n for n in tree.body if defined_name(n)}
        cls = top.get(self.mixin["class"]) if self.mixin else None
        methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)} if isinstance(cls, ast.ClassDef) else {}
        in_src = [n for n in self.names if n in top] + [m for m in self.methods if m in methods]
        dest_top: set[str] = set()
        dest_methods: set[str] = set()
        if self.dest.exists():
            dtree = ast.parse(self.dest.read_text())
            dest_top = {defined_name(n) for n in dtree.body if defined_name(n)}
            if self.mixin:
                mcls = next((n for n in dtree.body if isinstance(n, ast.ClassDef) and n.name == self.mixin["name"]),
                            None)
                dest_methods = {n.name for n in mcls.body if isinstance(n, ast.FunctionDef)} if mcls else set()
        in_dest = [n for n in self.names if n in dest_top] + [m for m in self.methods if m in dest_methods]
        if self.mixin and not isinstance(cls, ast.ClassDef):
            return f"{self.src}: no class {self.mixin['class']} (renamed on a branch? update SPLITS)"
        if not in_src and len(in_dest) == len(self.names) + len(self.methods):
            return "done"
        missing = [n for n in self.names + self.methods if n not in in_src and n not in in_dest]
        if missing:
            return (f"{self.label()}: {', '.join(missing)} in neither file (renamed or removed on a branch? "
                    "update SPLITS)")
        if in_dest:
            return f"{self.label()}: {', '.join(in_dest)} already in {self.dest} while others are not: finish by hand"
        if self.mixin and self.dest.exists():
            return f"{self.label()}: a mixin goes into a new file only, and {self.dest} exists"
        return "todo"

    def retyped(self, text: str) -> str:
        """The spec's `retype` ({name: text}) applied to the annotations of the definitions this step moves: a
        parameter typed with the source's class takes the mixin's type (which it is), so the new file need not
        import its source (a circle, even under TYPE_CHECKING)."""
        retype = self.spec.get("retype") or {}
        if not retype:
            return text
        tree = ast.parse(text)
        top = {defined_name(n): n for n in tree.body if defined_name(n)}
        nodes = [top[n] for n in self.names if n in top]
        cls = top.get(self.mixin["class"]) if self.mixin else None
        nodes += [m for m in (cls.body if cls else []) if isinstance(m, ast.FunctionDef) and m.name in self.methods]
        edits = []
        for node in nodes:
            for f in ast.walk(node):
                if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                anns = [a.annotation for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs +
                        [f.args.vararg, f.args.kwarg] if a is not None and a.annotation is not None]
                for ann in anns + ([f.returns] if f.returns is not None else []):
                    edits += [(n.lineno, n.col_offset, n.end_col_offset, retype[n.id]) for n in ast.walk(ann)
                              if isinstance(n, ast.Name) and n.id in retype]
        lines = text.splitlines(keepends=True)
        for ln, a, b, new in sorted(edits, reverse=True):
            lines[ln - 1] = lines[ln - 1][:a] + new + lines[ln - 1][b:]
        return "".join(lines)

    def apply(self, done_steps: list[Step], touched: set[str]) -> None:
        text = self.retyped(self.src.read_text())
        lines = text.splitlines(keepends=True)
        tree = ast.parse(text)
        top = {defined_name(n): n for n in tree.body if defined_name(n)}
        imports = import_bindings(tree)
        cls = top.get(self.mixin["class"]) if self.mixin else None
        moved_nodes = [top[n] for n in self.names]
        moved_methods = [m for m in (cls.body if cls else []) if isinstance(m, ast.FunctionDef) and
                         m.name in self.methods]
        moved_nodes.sort(key=lambda n: n.lineno)
        run, ann = names_used(moved_nodes + moved_methods)
        mine = set(self.names)
        src_pkg, dest_pkg = package_name(self.src), package_name(self.dest)
        dest_mod = module_name(self.dest)
        need_imports: list[str] = []
        type_only: list[str] = []
        problems = []
        for name in sorted(run | ann):
            if name in mine or hasattr(builtins, name) or name == "__name__":
                continue
            if name in imports:
                stmt, alias = imports[name]
                if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                    continue
                if isinstance(stmt, ast.Import):
                    need_imports.append(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
                else:
                    target = resolve(src_pkg, stmt.level, stmt.module) if stmt.level else stmt.module
                    if target == dest_mod:
                        continue  # the destination's own name (appending to an existing file)
                    frm = relative(dest_pkg, target) if stmt.level else target
                    need_imports.append(f"from {frm} import {alias.name}" +
                                        (f" as {alias.asname}" if alias.asname else ""))
            elif name in top:
                if name in ann and name not in run:
                    type_only.append(f"from {relative(dest_pkg, module_name(self.src))} import {name}")
                else:
                    where = [n.name for n in moved_nodes + moved_methods if name in names_used([n])[0]]
                    problems.append(f"{self.label()}: {', '.join(where)} use(s) {name}, which stays in "
                                    f"{self.src.name}: add {name} to this step's names (or an earlier step's)")
        if problems:
            raise Refused("\n  - ".join(problems))
        # the moved code, in its order
        chunks: list[str] = []
        prev_end = None
        for n in moved_nodes:  # definitions that stood together (a block of constants) stay together
            a, b = span(lines, n)
            piece = "".join(lines[a:b]).rstrip("\n") + "\n"
            if prev_end == a and chunks:
                chunks[-1] += piece
            else:
                chunks.append(piece)
            prev_end = b
        if self.mixin:
            body = "\n".join("".join(lines[slice(*span(lines, m))]).rstrip("\n") + "\n" for m in moved_methods)
            mdoc = wrap_doc(self.mixin["doc"], "    ")
            chunks.append(f"class {self.mixin['name']}:\n{mdoc}\n\n{body}")
        # the destination
        future = "from __future__ import annotations\n" if "from __future__ import annotations" in text else ""
        imp = "\n".join(dict.fromkeys(need_imports))
        if type_only:
            imp += ("\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                    + "\n".join("    " + t for t in dict.fromkeys(type_only)))
        if self.dest.exists():
            dtext = self.dest.read_text()
            dtree = ast.parse(dtext)
            dlines = dtext.splitlines(keepends=True)
            last_imp = max((n.end_lineno for n in dtree.body if isinstance(n, (ast.Import, ast.ImportFrom))),
                           default=0)
            head, tail = "".join(dlines[:last_imp]), "".join(dlines[last_imp:])
            new_dest = head + (imp + "\n" if imp else "") + tail.rstrip("\n") + "\n\n\n" + "\n\n".join(chunks)
        else:
            doc = wrap_doc(self.spec["doc"], "")
            new_dest = doc + "\n\n" + (future + "\n" if future else "") + (imp + "\n\n\n" if imp else "") + \
                "\n\n".join(chunks)
        new_dest = new_dest.replace("\n\n\n\n", "\n\n\n")
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        self.dest.write_text(new_dest.rstrip("\n") + "\n")
        subprocess.run(["git", "add", str(self.dest)], check=True)
        touched.add(str(self.dest))
        # the source: cut, import back, mixin base
        cuts = [span(lines, n) for n in moved_nodes + moved_methods]
        keep = [ln for i, ln in enumerate(lines) if not any(a <= i < b for a, b in cuts)]
        rest = re.sub(r"\n{4,}", "\n\n\n", "".join(keep))
        rest = re.sub(r"(\n    [^\n]*\n)\n\n+(    \S)", r"\1\n\2", rest)  # inside a class: one blank line
        rtree = ast.parse(rest)
        still_run, still_ann = names_used([n for n in rtree.body if not isinstance(n, (ast.Import, ast.ImportFrom))])
        back = [n for n in self.names if n in still_run | still_ann]
        if self.mixin:
            back.append(self.mixin["name"])
            rlines = rest.splitlines(keepends=True)
            c = next(n for n in rtree.body if isinstance(n, ast.ClassDef) and n.name == self.mixin["class"])
            head = rlines[c.lineno - 1]
            if c.bases:
                head = head.replace("):", f", {self.mixin['name']}):", 1)
            else:
                head = head.replace(f"class {c.name}:", f"class {c.name}({self.mixin['name']}):", 1)
            rlines[c.lineno - 1] = head
            rest = "".join(rlines)
            rtree = ast.parse(rest)
        if back:
            rlines = rest.splitlines(keepends=True)
            last_imp = max(n.end_lineno for n in rtree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
            stmt = f"from {relative(src_pkg, dest_mod)} import {', '.join(back)}\n"
            rlines.insert(last_imp, stmt)
            rest = "".join(rlines)
        self.src.write_text(rest)
        touched.add(str(self.src))


def wrap_doc(text: str, indent: str, width: int = 116) -> str:
    out, line = [], indent + '"""'
    for word in text.split(" "):
        if len(line) + 1 + len(word) > width and line.strip() != '"""':
            out.append(line.rstrip())
            line = indent + word
        else:
            line = line + word if line.endswith('"""') else f"{line} {word}"
    return "\n".join(out + [line + '"""'])


# ---- other files: imports of moved names, mentions -----------------------------------------------------------------
def repoint_imports(path: Path, moves: dict[str, dict[str, str]]) -> str | None:
    """`from <src module> import a, moved` -> one statement per module. moves: src module -> {name: dest module}."""
    text = path.read_text()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    in_server = str(path).startswith("server/")
    pkg = package_name(path) if in_server else ""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or (node.level and not in_server):
            continue
        base = resolve(pkg, node.level, node.module) if node.level else (node.module or "")
        if base not in moves or not any(a.name in moves[base] for a in node.names):
            continue
        groups: dict[str, list[ast.alias]] = {}
        for a in node.names:
            groups.setdefault(moves[base].get(a.name, base), []).append(a)
        first = lines[node.lineno - 1]
        indent = first[: node.col_offset]
        stmts = []
        for target, names in groups.items():
            frm = relative(pkg, target) if node.level else target
            stmts.append(f"from {frm} import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "")
                                                          for a in names))
        joiner = "; " if indent.strip() else "\n" + indent
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        edits.append((start, end, joiner.join(stmts)))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text if edits else None


def mention_pattern(moves: dict[str, dict[str, str]]) -> list[tuple[re.Pattern, dict[str, str], str]]:
    """`<src basename>.<moved name>` (also `worker/<room>/<src>.name`, `pytorch_to_triton...<src>.name`)."""
    out = []
    for src, names in moves.items():
        base = src.rsplit(".", 1)[1]
        alt = "|".join(sorted(names, key=len, reverse=True))
        out.append((re.compile(rf"(?P<pre>\bworker/(?:\w+/)?)?\b{base}\.(?P<name>{alt})\b"), names, base))
    return out


def rewrite_mentions(path: Path, pats: list, problems: list[str]) -> str | None:
    """Mentions in comments, strings and docs are rewritten; `<src>.<name>` in code is a problem (a module
    attribute the split moved: import it from its new file)."""
    text = path.read_text()

    def sub(s: str) -> str:
        for pat, names, _base in pats:
            def to(m: re.Match, names: dict[str, str] = names) -> str:
                dest = names[m["name"]]
                where = "worker/" + "/".join(dest.split(".")[2:]) if m["pre"] else dest.rsplit(".", 1)[1]
                return f"{where}.{m['name']}"

            s = pat.sub(to, s)
        return s

    if path.suffix != ".py":
        new = sub(text)
        return new if new != text else None
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    edits = []
    for i, t in enumerate(toks):
        if t.type in (tokenize.COMMENT, tokenize.STRING) or t.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            new = sub(t.string)
            if new != t.string:
                edits.append((offsets[t.start[0] - 1] + t.start[1], offsets[t.end[0] - 1] + t.end[1], new))
        elif t.type == tokenize.NAME and i + 2 < len(toks) and toks[i + 1].string == "." and \
                toks[i + 2].type == tokenize.NAME:
            for _pat, names, base in pats:
                if t.string == base and toks[i + 2].string in names and (i == 0 or toks[i - 1].string != "."):
                    problems.append(f"{path}:{t.start[0]}: {base}.{toks[i + 2].string} in code: the name moved to "
                                    f"{names[toks[i + 2].string]}; import it from there")
        elif t.type == tokenize.NAME and t.string == "setattr" and i + 5 < len(toks):
            mod, attr = toks[i + 2].string, toks[i + 4].string.strip("\"'")
            for _pat, names, base in pats:
                if mod == base and attr in names:
                    problems.append(f"{path}:{t.start[0]}: setattr({base}, {attr!r}): the name moved to "
                                    f"{names[attr]}; patch it there")
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text if edits else None


# ---- docs/ARCHITECTURE.md: a row per new file ------------------------------------------------------------------------
def architecture_rows(steps: list[Step]) -> None:
    arch = Path("docs/ARCHITECTURE.md")
    if not arch.exists():
        return
    text = arch.read_text()
    lines = text.split("\n")
    for st in steps:
        if not st.spec.get("doc") or re.search(rf"[ /]{re.escape(st.dest.name)}\s", text):
            continue
        row = re.compile(rf"^(?P<pre>.*?)[├└]── (?P<name>{re.escape(st.src.name)})(?P<sp>\s+)\S")
        i = next((k for k, ln in enumerate(lines) if row.match(ln)), None)
        if i is None:
            continue
        m = row.match(lines[i])
        col = len(m["pre"]) + 4 + len(m["name"]) + len(m["sp"])
        what = st.spec.get("row") or st.spec["doc"].split(":")[0]
        head = f"{m['pre']}├── {st.dest.name}"
        lines.insert(i, f"{head:<{col}}{what[:150 - col]}")
        text = "\n".join(lines)
    arch.write_text("\n".join(lines))


# ---- self-check ----------------------------------------------------------------------------------------------------
def self_check() -> list[str]:
    problems = []
    defs: dict[str, set[str]] = {}
    deps: dict[str, set[str]] = {}
    for p in tracked_files():
        if p.startswith("server/") and p.endswith(".py"):
            path = Path(p)
            tree = ast.parse(path.read_text())
            mod = module_name(path)
            names = set(import_bindings(tree))
            for n in tree.body:  # every name the module binds at its top level (also in if/try blocks, tuples)
                for s in ast.walk(n):
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        names.add(s.name)
                    elif isinstance(s, ast.Name) and isinstance(s.ctx, ast.Store):
                        names.add(s.id)
                    elif isinstance(s, (ast.Import, ast.ImportFrom)):
                        names |= {a.asname or a.name.split(".")[0] for a in s.names}
            defs[mod] = names
            pkg = package_name(path)
            runtime = set()
            for n in ast.walk(tree):  # every import, TYPE_CHECKING ones too: farm-studio draws them as arrows
                if isinstance(n, ast.ImportFrom):
                    base = resolve(pkg, n.level, n.module) if n.level else (n.module or "")
                    runtime.add(base)
                    runtime |= {f"{base}.{a.name}" for a in n.names}
            deps[mod] = runtime
    for p in tracked_files():
        if not p.endswith(".py") or not p.startswith(CODE_DIRS) or p.startswith(FROZEN):
            continue
        path = Path(p)
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        pkg = package_name(path) if p.startswith("server/") else ""
        for n in ast.walk(tree):
            if not isinstance(n, ast.ImportFrom) or (n.level and not pkg):
                continue
            base = resolve(pkg, n.level, n.module) if n.level else (n.module or "")
            if base not in defs:
                continue
            for a in n.names:
                if a.name != "*" and a.name not in defs[base] and f"{base}.{a.name}" not in defs:
                    problems.append(f"{p}:{n.lineno}: imports {a.name} from {base}, which has no such name")
    for st in SPLITS:
        dest, src = module_name(WORKER / st["dest"]), module_name(WORKER / st["src"])
        if src in deps.get(dest, set()):
            problems.append(f"{dest} imports {src} at run time, and {src} imports it: a circle")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    a = ap.parse_args()
    if not WORKER.is_dir() or not (WORKER / "validation").is_dir():
        print(f"run from the repository root, after restructure.py ({WORKER}/validation/ not found)", file=sys.stderr)
        return 2
    steps = [Step(s) for s in SPLITS]
    states = [st.state() for st in steps]
    bad = [s for s in states if s not in ("todo", "done")]
    if bad:
        print("REFUSED: nothing was changed.\n  - " + "\n  - ".join(bad), file=sys.stderr)
        return 2
    for st, s in zip(steps, states):
        what = ", ".join(st.names + [f"{st.mixin['class']}.{m}" for m in st.methods])
        log(f"  {'done already' if s == 'done' else 'move'}: {st.label()}: {what}")
    todo = [st for st, s in zip(steps, states) if s == "todo"]
    if a.dry_run or not todo:
        if not a.dry_run:
            problems = self_check()
            if problems:
                print("SELF-CHECK FAILED:\n  - " + "\n  - ".join(problems), file=sys.stderr)
                return 3
        log(f"split: {len(todo)} step(s) to do, {len(steps) - len(todo)} done already; 0 file(s) rewritten")
        return 0
    touched: set[str] = set()
    done: list[Step] = []
    for st in todo:
        try:
            st.apply(done, touched)
        except Refused as e:
            print(f"REFUSED at step {st.label()} (earlier steps are applied: `git checkout . && git clean -fd` "
                  f"undoes them):\n  - {e}", file=sys.stderr)
            return 2
        done.append(st)
    # other files
    moves: dict[str, dict[str, str]] = {}
    for st in steps:
        moves.setdefault(module_name(st.src), {}).update({n: module_name(st.dest) for n in st.moved})
    problems: list[str] = []
    pats = mention_pattern(moves)
    for p in tracked_files():
        if p.startswith(FROZEN):
            continue
        path = Path(p)
        if path.suffix == ".py" and p.startswith(CODE_DIRS):
            new = repoint_imports(path, moves)
            if new is not None:
                path.write_text(new)
                touched.add(p)
        if path.suffix in TEXT_EXT:
            try:
                new = rewrite_mentions(path, pats, problems)
            except UnicodeDecodeError:
                continue
            if new is not None:
                path.write_text(new)
                if p.endswith(".py"):
                    touched.add(p)
    architecture_rows(steps)
    # README's "Where things are" lists the rooms' files: the new ones too
    Path("README.md").write_text(restructure.update_readme(Path("README.md").read_text()))
    py = sorted(t for t in touched if t.endswith(".py"))
    ruff = shutil.which("ruff")
    if ruff and py:
        subprocess.run([ruff, "check", "--fix", "-q", "--select", "I,F401", *py], check=False)
    problems += self_check()
    if problems:
        print("SELF-CHECK FAILED after the change:\n  - " + "\n  - ".join(problems), file=sys.stderr)
        return 3
    for f in dict.fromkeys(f for st in todo for f in (st.src, st.dest)):
        log(f"  {f}: {len(f.read_text().splitlines())} lines")
    log(f"split: {len(todo)} step(s) applied, {len(py)} file(s) rewritten; self-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
