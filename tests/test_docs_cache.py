"""Tests of the Triton docs cache against a real HTTP server on loopback (pytest-httpserver); no internet."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import pythonpath
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pytorch_to_triton.docs_cache import (
    BEST_PRACTICES_FILE,
    GUIDE_FILE,
    TUTORIALS_FILE,
    DocsConfig,
    DocsError,
    DocsResult,
    fetch_docs,
)
from pytorch_to_triton.docs_cache.store import atomic_write, clean_temp_files

FIXTURES = Path(__file__).parent / "docs_fixtures" / "main"
SERVER_ROOT = Path(__file__).resolve().parents[1] / "server"
N_PAGES = len(list(FIXTURES.rglob("*.html")))  # every fixture page is reachable from the default seeds
LOAD = "/main/python-api/generated/triton.language.load.html"
TESTING = "/main/python-api/triton.testing.html"
INSTALLED = importlib.metadata.version("triton")


class Site:
    """The fixture pages served with ETag/Last-Modified and If-None-Match support; pages can be swapped."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.pages = {
            f"/main/{p.relative_to(FIXTURES).as_posix()}": p.read_bytes() for p in FIXTURES.rglob("*.html")
        }
        self.etags = {path: f'"v1-{hashlib.sha1(body).hexdigest()[:8]}"' for path, body in self.pages.items()}
        self.special: dict[str, Callable[[Request], Response]] = {}
        for path in self.pages:
            server.expect_request(path).respond_with_handler(
                lambda request, path=path: self._handle(path, request)
            )

    def _handle(self, path: str, request: Request) -> Response:
        if path in self.special:
            return self.special[path](request)
        etag = self.etags[path]
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        headers = {"ETag": etag, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
        return Response(self.pages[path], content_type="text/html; charset=utf-8", headers=headers)

    def replace(self, path: str, body: bytes) -> None:
        self.pages[path] = body
        self.etags[path] = f'"v2-{hashlib.sha1(body).hexdigest()[:8]}"'

    def requests(self) -> list[Request]:
        return [request for request, _response in self.server.log]


@pytest.fixture
def site(httpserver: HTTPServer) -> Iterator[Site]:
    yield Site(httpserver)


@pytest.fixture
def best_practices(tmp_path: Path) -> Path:
    path = tmp_path / "refs" / BEST_PRACTICES_FILE
    path.parent.mkdir()
    path.write_text("# Triton best practices\n\n## Autotune\n\nSweep BLOCK_SIZE with triton.autotune.\n")
    return path


def config_for(site: Site, best_practices: Path | None = None, **overrides: object) -> DocsConfig:
    values: dict[str, object] = dict(
        base_url=site.server.url_for("/main/"),
        allowed_hosts=["localhost"],
        allow_private_hosts=["localhost"],  # loopback only by explicit config
        retries=1,
        backoff_s=0.01,
        connect_timeout_s=2,
        read_timeout_s=2,
        installed_reference=False,  # the introspection subprocess is exercised by its own tests
        best_practices_path=best_practices,
    )
    values.update(overrides)
    return DocsConfig(**values)


def page_file(cache: Path, slug: str) -> Path:
    return cache / "pages" / f"{slug}.md"


def read_index(cache: Path) -> dict:
    return json.loads((cache / "index.json").read_text())


def test_first_fetch_writes_combined_files_pages_and_index(
    site: Site, tmp_path: Path, best_practices: Path
) -> None:
    cache = tmp_path / "docs" / ".triton_docs"
    events: list[tuple[str, float | None]] = []
    result = fetch_docs(
        cache, config=config_for(site, best_practices), on_event=lambda m, f: events.append((m, f))
    )

    assert result.pages_fetched == N_PAGES and not result.pages_failed
    assert result.source == "network"
    guide = (cache / GUIDE_FILE).read_text()
    assert "`triton.language.load(pointer, mask=None, other=None," in guide  # signature kept
    assert "`class triton.Config(kwargs, num_warps=4" in guide
    assert "triton.testing.do_bench(fn, warmup=25" in guide and "triton.heuristics(values)" in guide
    assert "```python\noffsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)" in guide  # code block kept
    assert "| [`atomic_add`](http://" in guide  # autosummary table with absolute links
    assert "- **mask** (*Block of triton.int1, optional*)" in guide  # parameter list
    for chrome in ("SIDEBAR-MARKER", "FOOTER-MARKER", "View page source", "Search docs", "Gallery generated"):
        assert chrome not in guide
    tutorials = (cache / TUTORIALS_FILE).read_text()
    assert "def add_kernel(x_ptr," in tutorials and "accumulator = tl.dot(a, b, accumulator)" in tutorials
    assert "Download Jupyter notebook" not in tutorials and "Below is a gallery" not in tutorials
    assert (cache / BEST_PRACTICES_FILE).read_text() == best_practices.read_text()
    assert str(cache.resolve() / GUIDE_FILE) in result.files
    index = read_index(cache)
    load_url = site.server.url_for(LOAD)
    entry = index["pages"][load_url]
    assert entry["etag"] == site.etags[LOAD] and entry["last_modified"].startswith("Tue, 01 Dec 2026")
    assert entry["fetched_at"] and entry["triton_version"] == "main"
    assert entry["size"] == page_file(cache, "triton.language.load").stat().st_size
    assert len(index["pages"]) == N_PAGES
    assert (
        len(events) >= N_PAGES and all(f is None or 0 <= f <= 1 for _m, f in events) and events[-1][1] == 1.0
    )
    assert {p.name for p in cache.iterdir()} <= {
        GUIDE_FILE,
        TUTORIALS_FILE,
        BEST_PRACTICES_FILE,
        "index.json",
        "pages",
        ".lock",
    }  # nothing else written


def test_304_reuses_the_cached_body(site: Site, tmp_path: Path) -> None:
    config = config_for(site, max_age_s=0)  # stale at once: every page is revalidated
    fetch_docs(tmp_path, config=config)
    before = page_file(tmp_path, "triton.language.load").read_bytes()
    site.server.clear_log()

    result = fetch_docs(tmp_path, config=config)

    assert result.pages_not_modified == N_PAGES and result.pages_fetched == 0
    assert result.source == "network"
    requests = site.requests()
    assert len(requests) == N_PAGES
    assert all(r.headers.get("If-None-Match", "").startswith('"v1-') for r in requests)
    assert all(r.headers.get("If-Modified-Since") for r in requests)
    assert all(response.status_code == 304 for _r, response in site.server.log)
    assert page_file(tmp_path, "triton.language.load").read_bytes() == before


def test_etag_change_refetches_only_that_page(site: Site, tmp_path: Path) -> None:
    config = config_for(site, max_age_s=0)
    fetch_docs(tmp_path, config=config)
    site.replace(LOAD, site.pages[LOAD].replace(b"Pointer to the data to be loaded", b"NEW-LOAD-DOC"))

    result = fetch_docs(tmp_path, config=config)

    assert result.pages_fetched == 1 and result.pages_not_modified == N_PAGES - 1
    assert "NEW-LOAD-DOC" in page_file(tmp_path, "triton.language.load").read_text()
    assert "NEW-LOAD-DOC" in (tmp_path / GUIDE_FILE).read_text()
    assert read_index(tmp_path)["pages"][site.server.url_for(LOAD)]["etag"].startswith('"v2-')


def test_fresh_cache_is_reused_without_any_request(site: Site, tmp_path: Path) -> None:
    fetch_docs(tmp_path, config=config_for(site))
    site.server.clear_log()

    result = fetch_docs(tmp_path, config=config_for(site))

    assert site.requests() == []
    assert result.pages_cached == N_PAGES and result.source == "cache"


def test_refresh_forces_a_recheck_of_a_fresh_cache(site: Site, tmp_path: Path) -> None:
    fetch_docs(tmp_path, config=config_for(site))
    site.server.clear_log()

    result = fetch_docs(tmp_path, config=config_for(site), refresh=True)

    assert len(site.requests()) == N_PAGES and result.pages_cached == 0
    assert result.pages_not_modified == N_PAGES


def test_corrupted_page_file_is_downloaded_again_unconditionally(site: Site, tmp_path: Path) -> None:
    config = config_for(site, max_age_s=0)
    fetch_docs(tmp_path, config=config)
    page_file(tmp_path, "triton.language.load").write_text("garbage")
    site.server.clear_log()

    result = fetch_docs(tmp_path, config=config)

    load_requests = [r for r in site.requests() if r.path == LOAD]
    assert load_requests and "If-None-Match" not in load_requests[0].headers
    assert (
        result.pages_fetched == 1
        and "triton.language.load(pointer" in page_file(tmp_path, "triton.language.load").read_text()
    )


def test_offline_with_empty_cache_falls_back_to_introspection(tmp_path: Path) -> None:
    result = fetch_docs(tmp_path, offline=True, topic="tl.load", config=DocsConfig(best_practices_path=None))

    assert result.source == "offline-introspection"
    assert result.triton_version_installed == INSTALLED and result.triton_version_docs == INSTALLED
    guide = (tmp_path / GUIDE_FILE).read_text()
    assert f"Installed Triton API reference (triton {INSTALLED})" in guide
    assert "`triton.language.load(pointer, mask=None, other=None" in guide
    assert "`triton.autotune(configs, key" in guide and "triton.testing.do_bench(" in guide
    assert "_semantic" not in guide  # compiler plumbing is not an argument users pass
    assert any("introspection" in w for w in result.warnings)
    assert result.sections and result.sections[0].title.startswith("triton.language.load(")
    assert "github.com/triton-lang/triton/blob/" in result.sections[0].source_url


def test_offline_with_nothing_available_raises_an_actionable_error(tmp_path: Path) -> None:
    config = DocsConfig(python=str(tmp_path / "no-such-python"))
    with pytest.raises(DocsError, match="Connect to the network"):
        fetch_docs(tmp_path / "cache", offline=True, config=config)


def test_offline_with_cache_uses_it_without_requests(site: Site, tmp_path: Path) -> None:
    fetch_docs(tmp_path, config=config_for(site, max_age_s=0))
    site.server.clear_log()

    result = fetch_docs(tmp_path, offline=True, config=config_for(site, max_age_s=0))

    assert site.requests() == [] and result.source == "cache" and result.pages_cached == N_PAGES


def test_unreachable_network_stops_after_the_first_page_and_falls_back(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = DocsConfig(
        base_url=f"http://localhost:{port}/main/",
        allowed_hosts=["localhost"],
        allow_private_hosts=["localhost"],
        retries=0,
        connect_timeout_s=1,
    )
    started = time.monotonic()
    result = fetch_docs(tmp_path, config=config)

    assert time.monotonic() - started < 20
    assert result.source == "offline-introspection"
    assert "ConnectError" in result.pages_failed[0].reason
    assert all("no network" in f.reason for f in result.pages_failed[1:])
    assert any("network unreachable" in w for w in result.warnings)


def test_oversized_pages_are_refused_and_the_cache_keeps_its_copy(site: Site, tmp_path: Path) -> None:
    config = config_for(site, max_age_s=0, max_page_bytes=40_000)
    fetch_docs(tmp_path, config=config)
    before = page_file(tmp_path, "triton.language.load").read_bytes()
    site.replace(LOAD, site.pages[LOAD] + b"<!-- pad -->" * 10_000)  # declared Content-Length over the cap

    def chunked(_request: Request) -> Response:  # no Content-Length: the cap must stop the stream
        return Response((b"<p>x</p>" * 1000 for _ in range(100)), content_type="text/html")

    site.special[TESTING] = chunked

    result = fetch_docs(tmp_path, config=config)

    failed = {f.url: f for f in result.pages_failed}
    assert "max_page_bytes" in failed[site.server.url_for(LOAD)].reason
    assert "max_page_bytes" in failed[site.server.url_for(TESTING)].reason
    assert all(f.used_cached_copy for f in failed.values())
    assert page_file(tmp_path, "triton.language.load").read_bytes() == before
    assert "triton.language.load(pointer" in (tmp_path / GUIDE_FILE).read_text()
    assert read_index(tmp_path)["pages"][site.server.url_for(LOAD)]["etag"].startswith('"v1-')


def test_redirect_outside_the_allowlist_is_refused(site: Site, tmp_path: Path) -> None:
    site.special[TESTING] = lambda _r: Response(
        status=302, headers={"Location": "https://evil.example.com/x.html"}
    )
    result = fetch_docs(tmp_path, config=config_for(site))
    failure = next(f for f in result.pages_failed if f.url == site.server.url_for(TESTING))
    assert "evil.example.com" in failure.reason and "allowed_hosts" in failure.reason
    assert not page_file(tmp_path, "triton.testing").exists()


def test_redirect_to_a_loopback_address_is_refused_unless_allowlisted(site: Site, tmp_path: Path) -> None:
    target = site.server.url_for(TESTING).replace("localhost", "127.0.0.1")
    site.special[TESTING] = lambda _r: Response(status=301, headers={"Location": target})
    # 127.0.0.1 passes the host allowlist but not the private-address rule: only "localhost" may be loopback.
    config = config_for(site, allowed_hosts=["localhost", "127.0.0.1"])
    result = fetch_docs(tmp_path, config=config)
    failure = next(f for f in result.pages_failed if f.url == site.server.url_for(TESTING))
    assert "non-public address 127.0.0.1" in failure.reason

    # A redirect that stays within the policy is followed.
    site.special[TESTING] = lambda _r: Response(status=302, headers={"Location": "triton.html"})
    result = fetch_docs(tmp_path, config=config, refresh=True)
    assert not result.pages_failed and page_file(tmp_path, "triton.testing").is_file()


def test_connection_closed_mid_body_keeps_the_previous_copy(site: Site, tmp_path: Path) -> None:
    config = config_for(site, max_age_s=0)
    fetch_docs(tmp_path, config=config)
    before = page_file(tmp_path, "triton.language.load").read_bytes()
    body = site.pages[LOAD]

    def broken(_request: Request) -> Response:
        def stream() -> Iterator[bytes]:
            yield body[: len(body) // 2]
            raise ConnectionResetError("server dies half-way")

        return Response(stream(), content_type="text/html", headers={"Content-Length": str(len(body))})

    site.special[LOAD] = broken
    result = fetch_docs(tmp_path, config=config)

    failure = next(f for f in result.pages_failed if f.url == site.server.url_for(LOAD))
    assert failure.used_cached_copy and "Error" in failure.reason
    assert len([r for r in site.requests() if r.path == LOAD]) >= 3  # first fetch + retried attempts
    assert page_file(tmp_path, "triton.language.load").read_bytes() == before
    assert "triton.language.load(pointer" in (tmp_path / GUIDE_FILE).read_text()


def test_interrupted_write_leaves_the_previous_file_intact(tmp_path: Path) -> None:
    target = tmp_path / "page.md"
    target.write_text("good copy")

    def failing() -> Iterator[bytes]:
        yield b"half of a new "
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, failing())
    assert target.read_text() == "good copy"
    assert [p.name for p in tmp_path.iterdir()] == ["page.md"]  # the temp file is gone


def test_writer_killed_mid_write_leaves_the_previous_file_intact(tmp_path: Path) -> None:
    target = tmp_path / "page.md"
    target.write_text("good copy")
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from pytorch_to_triton.docs_cache.store import atomic_write\n"
        "def slow():\n"
        "    yield b'half of a new page'\n"
        "    time.sleep(60)\n"
        "    yield b'never'\n"
        "atomic_write(Path(sys.argv[1]), slow())\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    writer = subprocess.Popen([sys.executable, "-c", script, str(target)], env=env)
    try:
        deadline = time.monotonic() + 20
        while not list(tmp_path.glob(".page.md.tmp-*")) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert list(tmp_path.glob(".page.md.tmp-*")), "the writer never started its temp file"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert target.read_text() == "good copy"
    assert clean_temp_files(tmp_path) == 1 and [p.name for p in tmp_path.iterdir()] == ["page.md"]


def test_two_concurrent_fetches_leave_a_consistent_index(site: Site, tmp_path: Path) -> None:
    results: list[DocsResult] = []
    errors: list[BaseException] = []

    def worker(refresh: bool) -> None:
        try:
            results.append(fetch_docs(tmp_path, config=config_for(site), refresh=refresh))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(flag,)) for flag in (False, True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert not errors and len(results) == 2 and all(not r.pages_failed for r in results)
    index = read_index(tmp_path)
    assert len(index["pages"]) == N_PAGES
    for entry in index["pages"].values():
        data = (tmp_path / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["size"]
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


@pytest.mark.parametrize(
    ("topic", "needle"),
    [
        ("tl.dot", "triton.language.dot"),
        ("autotune", "triton.autotune"),
        ("atomic_add", "triton.language.atomic_add"),
        ("associative_scan", "triton.language.associative_scan"),
    ],
)
def test_topic_search_returns_only_matching_sections(
    site: Site, tmp_path: Path, best_practices: Path, topic: str, needle: str
) -> None:
    result = fetch_docs(tmp_path, topic=topic, max_chars=4000, config=config_for(site, best_practices))

    assert result.sections
    first = result.sections[0]
    assert first.title.startswith(needle) and first.source_url.startswith(site.server.url_for(LOAD)[:20])
    assert "#" in first.source_url and Path(first.file).is_file()
    bare = topic.removeprefix("tl.")
    for section in result.sections:
        assert bare in section.text.lower() or bare in section.title.lower()
    assert all("triton.language.store(" not in s.title for s in result.sections)
    assert sum(len(s.text) for s in result.sections) <= 4000
    assert topic in result.summary


def test_topic_search_respects_a_small_budget(site: Site, tmp_path: Path) -> None:
    result = fetch_docs(tmp_path, topic="tl.load", max_chars=300, config=config_for(site))
    assert result.truncated and len(result.sections) == 1
    assert len(result.sections[0].text) <= 300 and "cut to fit max_chars" in result.sections[0].text


def test_topic_search_includes_the_installed_reference(site: Site, tmp_path: Path) -> None:
    result = fetch_docs(tmp_path, topic="atomic_add", config=config_for(site, installed_reference=True))
    urls = [s.source_url for s in result.sections]
    assert any(u.startswith("http://localhost") for u in urls)
    assert any(u.startswith(f"https://github.com/triton-lang/triton/blob/v{INSTALLED}/") for u in urls)
    assert f"Installed Triton API reference (triton {INSTALLED})" in (tmp_path / GUIDE_FILE).read_text()


def test_version_mismatch_is_warned(site: Site, tmp_path: Path) -> None:
    for path, body in list(site.pages.items()):
        site.pages[path] = body.replace(b"Triton  documentation", b"Triton 3.4.0 documentation")
    result = fetch_docs(tmp_path, config=config_for(site))
    assert result.triton_version_docs == "3.4.0"
    assert any("3.4.0" in w and INSTALLED in w and "mismatch" in w for w in result.warnings)


def test_matching_version_is_not_warned(site: Site, tmp_path: Path) -> None:
    for path, body in list(site.pages.items()):
        site.pages[path] = body.replace(
            b"Triton  documentation", f"Triton {INSTALLED} documentation".encode()
        )
    result = fetch_docs(tmp_path, config=config_for(site))
    assert result.triton_version_docs == INSTALLED
    assert not any("mismatch" in w for w in result.warnings)


def test_missing_best_practices_is_a_warning(site: Site, tmp_path: Path) -> None:
    result = fetch_docs(tmp_path / "c", config=config_for(site, tmp_path / "absent.md"))
    assert any("triton-best-practices.md not copied" in w for w in result.warnings)
    assert not (tmp_path / "c" / BEST_PRACTICES_FILE).exists()


def test_unusable_cache_dir_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(DocsError, match="unusable"):
        fetch_docs(blocker / "cache", offline=True)


def test_redirect_loop_is_cut_off(site: Site, tmp_path: Path) -> None:
    site.special[TESTING] = lambda _r: Response(status=302, headers={"Location": TESTING})
    result = fetch_docs(tmp_path, config=config_for(site, max_redirects=3))
    failure = next(f for f in result.pages_failed if f.url == site.server.url_for(TESTING))
    assert "more than 3 redirects" in failure.reason
    assert len([r for r in site.requests() if r.path == TESTING]) == 4  # not retried: a policy refusal


def test_a_fetch_waits_for_the_lock_and_says_so_when_it_times_out(tmp_path: Path) -> None:
    from pytorch_to_triton.docs_cache.store import cache_lock

    with cache_lock(tmp_path, timeout_s=1):
        with pytest.raises(DocsError, match="another fetch_triton_docs"):
            fetch_docs(tmp_path, offline=True, config=DocsConfig(lock_timeout_s=0.2))


def test_a_topic_without_matches_says_what_to_try(site: Site, tmp_path: Path) -> None:
    result = fetch_docs(tmp_path, topic="quantum teleportation", config=config_for(site))
    assert result.sections == [] and not result.truncated
    assert any("no section matches 'quantum teleportation'" in w for w in result.warnings)
