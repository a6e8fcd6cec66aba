"""HTTP GET with an allowlist, manual redirects, a size cap, retries and conditional requests."""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from .. import __version__
from .errors import FetchError, FetchRefused, HTTPStatusFailure, NetworkFailure
from .models import DocsConfig
from .sources import host_allowed

USER_AGENT = f"pytorch-to-triton-docs/{__version__} (+https://triton-lang.org docs cache)"
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class FetchResult:
    """A fetched page (``not_modified``: the server answered 304 and ``body`` is empty)."""

    url: str
    final_url: str
    not_modified: bool
    body: bytes
    etag: str | None
    last_modified: str | None
    content_type: str


def check_url(url: str, config: DocsConfig) -> None:
    """Refuse URLs outside the allowlist or resolving to non-public addresses (unless explicitly allowed)."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https"):
        raise FetchRefused(f"refused {url}: scheme {parsed.scheme!r} is not http(s)")
    host = parsed.host
    if not host or not host_allowed(host, config.allowed_hosts):
        raise FetchRefused(
            f"refused {url}: host {host!r} is not in allowed_hosts {config.allowed_hosts} "
            "(add it to DocsConfig.allowed_hosts if it is a Triton documentation host)"
        )
    if host_allowed(host, config.allow_private_hosts):
        return
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise NetworkFailure(f"cannot resolve {host}: {exc}", unreachable=True) from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global:
            # Checked for every hop so a redirect (or DNS answer) cannot steer us to internal services.
            raise FetchRefused(
                f"refused {url}: {host} resolves to non-public address {address} "
                "(only hosts in DocsConfig.allow_private_hosts may)"
            )


class Fetcher:
    """Fetch pages under the policy of a DocsConfig; ``client`` is the transport seam for tests."""

    def __init__(self, config: DocsConfig, client: httpx.Client | None = None) -> None:
        self.config = config
        self.timeout = httpx.Timeout(
            config.read_timeout_s, connect=config.connect_timeout_s, pool=config.connect_timeout_s
        )
        self._own_client = client is None
        self.client = client or httpx.Client(timeout=self.timeout, follow_redirects=False)

    def close(self) -> None:
        """Close the HTTP client if this fetcher created it."""
        if self._own_client:
            self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        """GET url with retries and backoff; conditional when etag/last_modified are given."""
        headers = {"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        attempt = 0
        while True:
            try:
                return self._get_once(url, headers)
            except FetchError as exc:
                if not exc.retryable or attempt >= self.config.retries:
                    raise
            time.sleep(self.config.backoff_s * (2**attempt))
            attempt += 1

    def _get_once(self, url: str, headers: dict[str, str]) -> FetchResult:
        current = url
        for _hop in range(self.config.max_redirects + 1):
            check_url(current, self.config)
            try:
                with self.client.stream(
                    "GET", current, headers=headers, follow_redirects=False, timeout=self.timeout
                ) as response:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("location")
                        if not location:
                            raise HTTPStatusFailure(
                                f"{current}: redirect without Location", response.status_code
                            )
                        current = urljoin(current, location)
                        continue
                    return self._read(url, current, response)
            except httpx.TransportError as exc:
                unreachable = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
                kind = type(exc).__name__
                raise NetworkFailure(f"{current}: {kind}: {exc}", unreachable=unreachable) from exc
        raise FetchRefused(f"refused {url}: more than {self.config.max_redirects} redirects")

    def _read(self, url: str, final_url: str, response: httpx.Response) -> FetchResult:
        etag = response.headers.get("etag")
        last_modified = response.headers.get("last-modified")
        content_type = response.headers.get("content-type", "")
        if response.status_code == 304:
            return FetchResult(url, final_url, True, b"", etag, last_modified, content_type)
        if response.status_code >= 400:
            raise HTTPStatusFailure(f"{final_url}: HTTP {response.status_code}", response.status_code)
        cap = self.config.max_page_bytes
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise FetchRefused(f"refused {final_url}: {declared} bytes is over max_page_bytes={cap}")
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > cap:  # counts decoded bytes, so a compressed bomb is stopped too
                raise FetchRefused(f"refused {final_url}: more than max_page_bytes={cap} bytes")
        return FetchResult(url, final_url, False, bytes(body), etag, last_modified, content_type)
