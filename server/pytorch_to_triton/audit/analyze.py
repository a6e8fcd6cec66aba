"""audit_source: parse the file, walk each kernel, then run the kernel, host and honesty checks."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from .catalog import CHECKS
from .context import AuditContext, KernelFacts
from .dataflow import KernelInterpreter
from .honesty_checks import check_honesty
from .host_checks import HostReader, caller_guards, check_host, exact_kernels, param_dtypes
from .imports import Imported, follow, package_root
from .kernel_checks import check_kernel
from .model import AuditReport, Finding
from .reach import demote, roots
from .structure import FileModel

FAILED = "static analysis failed on"
# What static analysis cannot see, said in every report so a clean audit is not read as a proof.
NOT_CHECKED = [
    "runtime values: actual shapes, dtypes and strides of the inputs (run_validation tests them)",
    "races and ordering between programs beyond atomics and store-then-load of one buffer",
    "register pressure, occupancy and vectorization (compiled analysis, GPU with reference=)",
]


def audit_source(source: str, filename: str = "<inline>", candidate: bool = False, path: Path | None = None,
                 root: Path | None = None, name_of: Callable[[Path], str] | None = None,
                 entry: str | None = None) -> AuditReport:
    """Audit Triton source statically (AST only; the code is never executed).

    `candidate`: the file is a benchmark candidate (audited with a task reference); a file that defines ModelNew
    is one too. Only a candidate's honesty checks are findings; otherwise they are host-code information.
    `path` (the file on disk) and `root` (the workspace): kernels the file imports from modules of its own package
    are read and checked too (audit/imports.py), their findings on their own file; `name_of` names those files.
    `entry`: the function the probes call (a harness's ENTRY); with it, or ModelNew.forward, code it never reaches
    gets at most a note (reach.py)."""
    report = AuditReport(file=filename, checked=[c for c in CHECKS if c != "syntax_error"])
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        c = CHECKS["syntax_error"]
        report.findings.append(Finding(id=c.id, category=c.category, severity=c.severity, file=filename,
                                       line=e.lineno or 0, evidence=(e.text or "").strip(), why=str(e.msg),
                                       fix=c.fix, snippet=c.snippet))
        report.checked = ["syntax_error"]
        report.not_checked.append("everything else: the file does not parse")
        return report.finalize()
    imported = _imports(tree, path, root, name_of)
    model = FileModel(source, filename, tree, imported.kernels)
    report.candidate = candidate or "ModelNew" in model.classes
    ctx = AuditContext(model, report, report.candidate)
    contexts = _contexts(ctx, model, imported)
    reader = HostReader(model)
    dtypes = param_dtypes(model, reader)
    exact = exact_kernels(model)
    guards = caller_guards(model)
    for k in model.kernels.values():
        own = k.origin or model  # an imported kernel is walked with its own module's names and constants
        report.kernels.append({"name": k.name, "line": k.node.lineno, "autotune": k.autotune is not None,
                               "constexprs": [p for p in k.params if p in k.constexprs], "helper": k.helper,
                               "launched": any(ln.kernel == k.name for ln in model.launches()),
                               **({"file": own.filename} if k.origin is not None else {})})
        try:
            trace = KernelInterpreter(own, k, dtypes.get(k.name)).run()
            loaded = {b for a in trace.accesses if a.kind == "load" for b in a.ptr.bases}
            stored = {b for a in trace.accesses if a.kind != "load" for b in a.ptr.bases}
            ctx.facts[k.name] = KernelFacts(k, trace, loaded, stored)
            check_kernel(contexts.get(own.filename, ctx), k, trace, k.name in exact, guards.get(k.name, ""))
        except Exception as e:  # a construct the walk does not know must not cost the rest of the report
            report.not_checked.append(f"{FAILED} kernel {k.name}: {type(e).__name__}: {e}")
    for what, run in (("host checks", lambda: check_host(ctx, reader)), ("honesty checks", lambda: check_honesty(ctx))):
        try:
            run()
        except Exception as e:
            report.not_checked.append(f"{FAILED} {what}: {type(e).__name__}: {e}")
    report.not_checked += NOT_CHECKED
    if not model.kernels:
        report.not_checked.insert(0, "no @triton.jit function found in the file: kernel checks did not apply")
    unlaunched = [k.name for k in model.kernels.values() if not k.helper and not any(
        ln.kernel == k.name for ln in model.launches())]
    if unlaunched:
        report.not_checked.insert(0, f"no launch of {', '.join(unlaunched)} in this file: grid, stride, constexpr and "
                                     "honesty checks of its wrapper did not apply")
    unreached = demote(report, model, entry, report.candidate)
    if unreached:
        report.not_checked.append(f"not reached from the entry ({', '.join(roots(model, entry)[:1])}), so at most "
                                  f"notes: {', '.join(unreached[:12])}" + (" ..." if len(unreached) > 12 else ""))
    return report.finalize()


def _imports(tree: ast.Module, path: Path | None, root: Path | None, name_of: Callable[[Path], str] | None) \
        -> Imported:
    if path is None:
        return Imported()
    try:
        top = package_root(path, root or path.parent)
        return follow(tree, path, top, name_of or (lambda p: p.name))
    except Exception as e:  # noqa: BLE001 - an import the follow cannot read must not cost the file's own report
        return Imported(notes=[f"imports not followed: {type(e).__name__}: {e}"])


def _contexts(ctx: AuditContext, model: FileModel, imported: Imported) -> dict[str, AuditContext]:
    """One context per imported file (findings on its kernels carry its name and lines), sharing the report and the
    kernels' facts; the file's launches of them are borrowed, so their checks see how this file calls them."""
    out: dict[str, AuditContext] = {}
    for name, k in imported.kernels.items():
        if k.origin is None or model.kernels.get(name) is not k:
            continue
        other = out.get(k.origin.filename)
        if other is None:
            other = out[k.origin.filename] = AuditContext(k.origin, ctx.report, ctx.candidate)
            other.facts = ctx.facts
        k.origin.borrowed = [ln for ln in model.launches() if ln.kernel in imported.kernels]
        ctx.borrow(other, k.node)
    if imported.files:
        ctx.report.checked.append(f"imported kernels read from {', '.join(imported.files)}: "
                                  f"{', '.join(sorted(n for n, k in imported.kernels.items() if model.kernels.get(n) is k))}")
    ctx.report.not_checked += imported.notes
    return out
