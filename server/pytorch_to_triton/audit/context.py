"""The state one audit shares between its checks: the file model, each kernel's trace, and the findings."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .catalog import CHECKS
from .dataflow import Trace
from .model import AuditReport, Finding
from .names import segment
from .structure import FileModel, KernelDecl


@dataclass
class KernelFacts:
    """What host checks need to know about a kernel after its walk."""

    decl: KernelDecl
    trace: Trace
    loaded: set[str]
    stored: set[str]

    @property
    def stride_params(self) -> list[str]:
        return [p for p in self.decl.params if "stride" in p.lower() and p not in self.decl.constexprs]

    @property
    def pointer_params(self) -> set[str]:
        return self.loaded | self.stored


class AuditContext:
    """Adds findings with the catalog's defaults, once per (check, line)."""

    def __init__(self, model: FileModel, report: AuditReport):
        self.model, self.report = model, report
        self.facts: dict[str, KernelFacts] = {}
        self._seen: set[tuple[str, int, str]] = set()

    def add(self, check: str, node: ast.AST | None, function: str | None, *, why: str = "", fix: str = "",
            snippet: str = "", evidence: str = "", line: int | None = None) -> None:
        c = CHECKS[check]
        ln = line if line is not None else getattr(node, "lineno", 0)
        key = (check, ln, function or "")
        if key in self._seen:
            return
        self._seen.add(key)
        ev = evidence or (segment(self.model.source, node) if node is not None else "")
        self.report.findings.append(Finding(
            id=check, category=c.category, severity=c.severity, file=self.model.filename, line=ln,
            function=function, evidence=ev, why=why or c.why, fix=fix or c.fix, snippet=snippet or c.snippet))

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.model.source, node) or ast.unparse(node)
