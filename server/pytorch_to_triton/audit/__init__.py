"""audit_kernel's static analysis: AST checks of @triton.jit functions and their launch wrappers.

The source is parsed, never executed. Checklist and report template: references/audit-guide.md.
"""

from __future__ import annotations

from .checks import audit_source
from .model import AuditReport, Finding, merge_compiled
from .render import render_markdown

__all__ = ["AuditReport", "Finding", "audit_source", "merge_compiled", "render_markdown"]
