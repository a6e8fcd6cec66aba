"""Triton docs cache: fetch (allowlisted, cached, conditional), convert to markdown, introspect, search.

The lead's service calls ``fetch_docs``; the MCP tool fetch_triton_docs wraps it.
"""

from .cache import BEST_PRACTICES_FILE, GUIDE_FILE, TUTORIALS_FILE, fetch_docs
from .errors import DocsError
from .models import DocsConfig, DocsResult, PageFailure, Section
from .sources import DEFAULT_PAGES, PageSpec

__all__ = [
    "BEST_PRACTICES_FILE",
    "DEFAULT_PAGES",
    "GUIDE_FILE",
    "TUTORIALS_FILE",
    "DocsConfig",
    "DocsError",
    "DocsResult",
    "PageFailure",
    "PageSpec",
    "Section",
    "fetch_docs",
]
