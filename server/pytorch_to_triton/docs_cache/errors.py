"""Errors of the docs cache.

DocsError                 fetch_docs cannot give any docs, or cache_dir is unusable (raised to callers)
FetchError                one URL could not be fetched (caught; reported in DocsResult.pages_failed)
 ├── FetchRefused         policy refusal: scheme, host outside the allowlist, private address,
 │                        too many redirects, page over max_page_bytes (never retried)
 ├── HTTPStatusFailure    an HTTP error status (5xx and 429 are retried, other 4xx are not)
 └── NetworkFailure       connect/read failures, timeouts, a body cut off half-way (retried);
                          ``unreachable`` is True when the host could not be reached at all
"""

from __future__ import annotations


class DocsError(Exception):
    """fetch_docs has nothing to give (offline, no cache, no introspection) or cache_dir is unusable."""


class FetchError(Exception):
    """One URL could not be fetched; the message says why."""

    retryable = False
    unreachable = False


class FetchRefused(FetchError):
    """The fetch policy refused the URL (allowlist, private address, size cap, redirects)."""


class HTTPStatusFailure(FetchError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = status_code >= 500 or status_code == 429


class NetworkFailure(FetchError):
    """A transport failure: connect error, timeout, connection closed mid-body."""

    retryable = True

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable
