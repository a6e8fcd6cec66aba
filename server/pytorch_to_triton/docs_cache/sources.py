"""Which pages make up the docs cache, which hosts may serve them, and how pages are named on disk."""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urldefrag, urljoin, urlsplit

from pydantic import BaseModel, Field

DEFAULT_BASE_URL = "https://triton-lang.org/main/"
# Triton's documentation site and its source hosts (tutorial sources, raw markdown).
DEFAULT_ALLOWED_HOSTS = ("triton-lang.org", "github.com", "raw.githubusercontent.com")

PageKind = Literal["api", "tutorial"]


class PageSpec(BaseModel):
    """One seed page; ``follow`` adds the pages it links to (e.g. one page per tl function)."""

    path: str = Field(description="path relative to base_url, or an absolute URL")
    kind: PageKind = Field(
        description="api pages go to triton-lang-guide.md, tutorials to triton-tutorials.md"
    )
    follow: str | None = Field(
        default=None,
        description="regex (full match) on link paths relative to base_url: linked pages to fetch too",
    )
    include: bool = Field(default=True, description="False: the page only serves to discover linked pages")


# The index pages list every documented object with a link to its own page ("generated/..."), so the
# cache follows the site's current API instead of a hard-coded list that would rot between releases.
DEFAULT_PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        path="python-api/triton.language.html",
        kind="api",
        follow=r"python-api/generated/triton\.language\.[A-Za-z0-9_.]+\.html",
    ),
    PageSpec(
        path="python-api/triton.html", kind="api", follow=r"python-api/generated/triton\.[A-Za-z0-9_]+\.html"
    ),
    PageSpec(
        path="python-api/triton.testing.html",
        kind="api",
        follow=r"python-api/generated/triton\.testing\.[A-Za-z0-9_]+\.html",
    ),
    PageSpec(path="python-api/triton-semantics.html", kind="api"),
    PageSpec(
        path="getting-started/tutorials/index.html",
        kind="tutorial",
        follow=r"getting-started/tutorials/[0-9][A-Za-z0-9_.-]*\.html",
        include=False,
    ),
)

_PREFIXES = (("python-api/generated/", ""), ("python-api/", ""), ("getting-started/tutorials/", "tutorial-"))


def page_url(base_url: str, path: str) -> str:
    """Absolute URL of a page path (relative to base_url), without fragment."""
    return urldefrag(urljoin(base_url, path))[0]


def relative_path(base_url: str, url: str) -> str | None:
    """The path of url relative to base_url, or None when url lies outside it."""
    url = urldefrag(url)[0]
    return url[len(base_url) :] if url.startswith(base_url) else None


def slug_for(base_url: str, url: str) -> str:
    """A safe, stable file stem for a page URL (``triton.language.load``, ``tutorial-01-vector-add``)."""
    rel = relative_path(base_url, url)
    if rel is None:
        parts = urlsplit(url)
        rel = parts.netloc + parts.path
    for prefix, replacement in _PREFIXES:
        if rel.startswith(prefix):
            rel = replacement + rel[len(prefix) :]
            break
    rel = re.sub(r"\.html?$", "", rel) or "index"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "--", rel).strip("-.")
    return re.sub(r"\.{2,}", ".", slug) or "index"


def host_allowed(host: str, allowed: list[str]) -> bool:
    """True when host is an allowlisted host or one of its subdomains."""
    host = host.lower().rstrip(".")
    for entry in allowed:
        entry = entry.lower().rstrip(".")
        if host == entry or host.endswith("." + entry):
            return True
    return False
