"""Configuration and result of fetch_docs (pydantic: they double as the MCP tool's schemas)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from .sources import DEFAULT_ALLOWED_HOSTS, DEFAULT_BASE_URL, DEFAULT_PAGES, PageSpec

Source = Literal["network", "cache", "offline-introspection", "mixed", "none"]


class DocsConfig(BaseModel):
    """Where the docs come from and the limits of fetching them."""

    base_url: str = Field(default=DEFAULT_BASE_URL, description="root of the Sphinx site; ends with '/'")
    allowed_hosts: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ALLOWED_HOSTS),
        description="hosts (and their subdomains) that pages and redirects may go to",
    )
    allow_private_hosts: list[str] = Field(
        default_factory=list,
        description="hosts that may resolve to loopback/private addresses (tests: 'localhost'); default none",
    )
    pages: list[PageSpec] = Field(default_factory=lambda: list(DEFAULT_PAGES))
    max_pages: int = Field(default=400, ge=1, description="cap on pages, discovered ones included")
    connect_timeout_s: float = Field(default=10.0, gt=0)
    read_timeout_s: float = Field(default=20.0, gt=0)
    retries: int = Field(default=2, ge=0, description="extra attempts after a retryable failure")
    backoff_s: float = Field(default=0.5, ge=0, description="first retry delay; doubles per attempt")
    max_redirects: int = Field(default=5, ge=0)
    max_page_bytes: int = Field(default=2_000_000, gt=0, description="pages larger than this are refused")
    max_age_s: float = Field(
        default=7 * 24 * 3600, ge=0, description="a page checked this recently is reused"
    )
    lock_timeout_s: float = Field(default=120.0, gt=0, description="wait this long for a concurrent fetch")
    installed_reference: bool = Field(
        default=True,
        description="append the installed triton's API (introspection) to the guide even when online",
    )
    python: str = Field(default=sys.executable, description="interpreter whose triton is introspected")
    introspect_timeout_s: float = Field(default=120.0, gt=0)
    best_practices_path: Path | None = Field(
        default=None, description="default: references/triton-best-practices.md of the skill"
    )


class PageFailure(BaseModel):
    """A page that could not be fetched this time (a previous copy, if any, is still used)."""

    url: str
    reason: str
    used_cached_copy: bool = False


class Section(BaseModel):
    """One section of the cache that matches the topic."""

    title: str
    source_url: str = Field(description="the official page (with anchor) or the source line it came from")
    file: str = Field(description="cache file holding the section")
    text: str


class DocsResult(BaseModel):
    """What fetch_docs did and where the docs are."""

    cache_dir: str
    files: list[str] = Field(
        description="combined files (guide, tutorials, best practices), then per-page files"
    )
    pages_fetched: int = 0
    pages_not_modified: int = Field(default=0, description="revalidated with a 304: no body downloaded")
    pages_cached: int = Field(default=0, description="fresh in the cache: reused without any request")
    pages_failed: list[PageFailure] = Field(default_factory=list)
    source: Source = Field(
        default="none",
        description="where the guide and tutorials came from; 'offline-introspection' when the guide was "
        "built from the installed triton because no web copy was available",
    )
    triton_version_docs: str | None = Field(default=None, description="version the cached web docs describe")
    triton_version_installed: str | None = None
    warnings: list[str] = Field(default_factory=list)
    topic: str | None = None
    sections: list[Section] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="matching text was cut or left out to fit max_chars")
    summary: str = ""
