"""audit_kernel's static analysis: AST checks of @triton.jit functions and the host code that launches them.

The source is parsed, never executed. Modules: structure (what the file holds), dataflow (the abstract walk
of a kernel body), kernel_checks / host_checks / honesty_checks (the rules), catalog (every check id with its
fix and snippet), analyze (audit_source), model (the report), render (markdown). Checklist and report
template: references/audit-guide.md.
"""

from __future__ import annotations

from .analyze import audit_source
from .catalog import CHECKS, COMPILED
from .model import AuditReport, Finding, merge_compiled
from .render import render_markdown

__all__ = ["CHECKS", "COMPILED", "AuditReport", "Finding", "audit_source", "merge_compiled", "render_markdown"]
