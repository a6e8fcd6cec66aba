"""The state one audit shares between its checks: the file model, each kernel's trace, and the findings."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .catalog import CHECKS
from .dataflow import Trace
from .model import AuditReport, Finding
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

    def __init__(self, model: FileModel, report: AuditReport, candidate: bool = False):
        self.model, self.report = model, report
        # A benchmark candidate (ModelNew, or audited with reference=) has its honesty checks judged as findings;
        # any other file gets them as information about its host code.
        self.candidate = candidate
        self.facts: dict[str, KernelFacts] = {}
        self._seen: set[tuple[str, int, str]] = set()
        self._lines: list[str] | None = None
        # id(node) -> the context of the file it belongs to, for kernels imported from another file: a finding on
        # one of their nodes is put on that file and line, never on this one (audit/imports.py)
        self.elsewhere: dict[int, AuditContext] = {}

    def borrow(self, other: AuditContext, node: ast.AST) -> None:
        """Route findings on `node` and everything under it (another file's kernel) to `other`."""
        for n in ast.walk(node):
            self.elsewhere[id(n)] = other

    def add(self, check: str, node: ast.AST | None, function: str | None, *, why: str = "", fix: str = "",
            snippet: str = "", evidence: str = "", line: int | None = None, verify: str = "") -> None:
        """`verify`: what the reader must check because the file does not show it; the finding drops to P2."""
        other = self.elsewhere.get(id(node)) if node is not None else None
        if other is not None and other is not self:
            return other.add(check, node, function, why=why, fix=fix, snippet=snippet, evidence=evidence, line=line,
                             verify=verify)
        c = CHECKS[check]
        ln = line if line is not None else getattr(node, "lineno", 0)
        key = (check, ln, function or "")
        if key in self._seen:
            return
        self._seen.add(key)
        ev = evidence or (_first_line(self.text(node)) if node is not None else "")
        severity = c.severity
        why = why or c.why
        if verify:
            severity = "P2" if c.severity in ("P0", "P1") else c.severity
            why = f"verify: {verify}. {why}"
        host_note = c.scope == "honesty" and not self.candidate
        f = Finding(id=check, category=c.category, severity="info" if host_note else severity,
                    file=self.model.filename, line=ln, function=function, evidence=ev, why=why, fix=fix or c.fix,
                    snippet=snippet or c.snippet)
        (self.report.host_code if host_note else self.report.findings).append(f)

    def text(self, node: ast.AST) -> str:
        """The node's source text (ast.get_source_segment splits the whole file on every call: 30 s on a big one)."""
        other = self.elsewhere.get(id(node))
        if other is not None and other is not self:
            return other.text(node)
        if self._lines is None:
            self._lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n|$)", self.model.source)
        try:
            start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            c0, c1 = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return ast.unparse(node)
        if end is None or c1 is None or end >= len(self._lines):
            return ast.unparse(node)
        if start == end:
            return self._lines[start].encode()[c0:c1].decode()
        first = self._lines[start].encode()[c0:].decode()
        last = self._lines[end].encode()[:c1].decode()
        return "".join([first, *self._lines[start + 1:end], last])


def _first_line(text: str, limit: int = 160) -> str:
    """First line of a node's source text, for the evidence column (as names.segment)."""
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""
