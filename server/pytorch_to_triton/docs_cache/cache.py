"""fetch_docs: bring the docs cache up to date (network, cache, or introspection) and answer a topic."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .convert import ConvertedPage, html_to_markdown, text_to_markdown, version_from_url
from .errors import DocsError, FetchError
from .fetcher import Fetcher, FetchResult
from .models import DocsConfig, DocsResult, PageFailure
from .search import SearchDoc, search
from .sources import PageKind, page_url, relative_path, slug_for
from .store import (
    PAGES_DIR,
    Index,
    IndexEntry,
    age_s,
    atomic_write,
    cache_lock,
    clean_temp_files,
    entry_file_ok,
    load_index,
    now_iso,
    prepare_cache_dir,
    save_index,
    sha256_bytes,
)

GUIDE_FILE = "triton-lang-guide.md"
TUTORIALS_FILE = "triton-tutorials.md"
BEST_PRACTICES_FILE = "triton-best-practices.md"
INSTALLED_SLUG = "installed-triton-api"
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # server/, so the subprocess can import us

EventFn = Callable[[str, float | None], None]


@dataclass
class _Use:
    """A page that will go into the combined files, and where its current copy came from."""

    entry: IndexEntry
    include: bool
    origin: str  # "network" or "cache"


@dataclass
class _Run:
    cache_dir: Path
    config: DocsConfig
    index: Index
    emit: EventFn
    warnings: list[str] = field(default_factory=list)
    uses: list[_Use] = field(default_factory=list)
    failures: list[PageFailure] = field(default_factory=list)
    fetched: int = 0
    not_modified: int = 0
    cached: int = 0


def _page_text(url: str, version: str, converted: ConvertedPage) -> str:
    return f"<!-- source: {url} | triton docs: {version} | fetched: {now_iso()} -->\n\n{converted.markdown}"


def _store_page(run: _Run, url: str, kind: PageKind, result: FetchResult) -> IndexEntry:
    """Convert a downloaded page, write pages/<slug>.md atomically and describe it for the index."""
    text = result.body.decode("utf-8", errors="replace")
    is_html = "html" in result.content_type or text.lstrip()[:1] == "<"
    converted = html_to_markdown(text, url) if is_html else text_to_markdown(text, url, result.content_type)
    version = converted.version or version_from_url(run.config.base_url)
    slug = slug_for(run.config.base_url, url)
    data = _page_text(url, version, converted).encode("utf-8")
    rel_file = f"{PAGES_DIR}/{slug}.md"
    atomic_write(run.cache_dir / rel_file, data)
    stamp = now_iso()
    return IndexEntry(
        url=url,
        slug=slug,
        kind=kind,
        file=rel_file,
        title=converted.title,
        fetched_at=stamp,
        checked_at=stamp,
        etag=result.etag,
        last_modified=result.last_modified,
        size=len(data),
        sha256=sha256_bytes(data),
        triton_version=version,
        links=converted.links,
    )


def _update_pages(run: _Run, fetcher: Fetcher | None, *, refresh: bool) -> None:
    """Walk the seed pages and the pages they link to; fetch, revalidate or reuse each one."""
    base = run.config.base_url
    queue: deque[tuple[str, PageKind, bool, str | None]] = deque(
        (page_url(base, spec.path), spec.kind, spec.include, spec.follow) for spec in run.config.pages
    )
    seen: set[str] = set()
    network_down: str | None = None if fetcher else "offline=true"
    while queue and len(seen) < run.config.max_pages:
        url, kind, include, follow = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        run.emit(f"docs: {slug_for(base, url)}", min(len(seen) / (len(seen) + len(queue) + 1), 0.95))
        entry = run.index.pages.get(url)
        have = entry is not None and entry_file_ok(run.cache_dir, entry)
        origin = "cache"
        if network_down:
            if not have:
                run.failures.append(
                    PageFailure(url=url, reason=f"not cached and no network ({network_down})")
                )
                continue
            run.cached += 1
        elif have and not refresh and age_s(entry.checked_at) < run.config.max_age_s:
            run.cached += 1
        else:
            try:
                result = fetcher.get(
                    url,
                    etag=entry.etag if have else None,
                    last_modified=entry.last_modified if have else None,
                )
            except FetchError as exc:
                run.failures.append(PageFailure(url=url, reason=str(exc), used_cached_copy=have))
                if exc.unreachable:
                    network_down = f"network unreachable: {exc}"
                if not have:
                    continue
            else:
                origin = "network"
                if result.not_modified and not have:
                    run.failures.append(
                        PageFailure(url=url, reason="304 Not Modified to an unconditional request")
                    )
                    continue
                if result.not_modified:
                    entry.checked_at = now_iso()
                    entry.etag = result.etag or entry.etag
                    entry.last_modified = result.last_modified or entry.last_modified
                    run.not_modified += 1
                else:
                    entry = _store_page(run, url, kind, result)
                    run.fetched += 1
                run.index.pages[url] = entry
                # Saved after every page, so a killed fetch leaves index and files in step.
                save_index(run.cache_dir, run.index)
        assert entry is not None
        run.uses.append(_Use(entry=entry, include=include, origin=origin))
        if follow:
            for link in entry.links:
                rel = relative_path(base, link)
                if rel is not None and re.fullmatch(follow, rel) and link not in seen:
                    queue.append((link, kind, True, None))
    if network_down and fetcher is not None:
        run.warnings.append(f"{network_down}; used the cached copies where there were some")
    left = {item[0] for item in queue} - seen
    if left:
        run.warnings.append(
            f"stopped at max_pages={run.config.max_pages}; {len(left)} linked pages not fetched"
        )


def installed_triton_version(python: str) -> str | None:
    """Version of triton in the server's own environment, read from metadata (triton is not imported)."""
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        return None  # another interpreter: the introspection subprocess reports its version
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return None


def run_introspection(config: DocsConfig, cwd: Path) -> tuple[str, str]:
    """(version, markdown) from ``python -m pytorch_to_triton.docs_cache.introspect``; raises RuntimeError."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # write nothing outside the cache, not even __pycache__
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    command = [config.python, "-m", "pytorch_to_triton.docs_cache.introspect", "--json"]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=config.introspect_timeout_s, cwd=cwd, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"{' '.join(command)} did not run: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"{config.python} could not introspect triton (exit {done.returncode}): {tail[0]}")
    payload = json.loads(done.stdout.strip().splitlines()[-1])
    return payload["triton_version"], payload["markdown"]


def _installed_reference(
    run: _Run, installed: str | None, *, refresh: bool, needed: bool
) -> IndexEntry | None:
    """The installed-API page, rebuilt when the installed version changed (or on refresh)."""
    previous = next((e for e in run.index.pages.values() if e.slug == INSTALLED_SLUG), None)
    if (
        previous
        and not refresh
        and installed
        and previous.triton_version == installed
        and entry_file_ok(run.cache_dir, previous)
    ):
        return previous
    run.emit("docs: introspecting the installed triton", 0.96)
    try:
        version, markdown = run_introspection(run.config, run.cache_dir)
    except (RuntimeError, ValueError, KeyError) as exc:
        level = "the guide has no language reference" if needed else "the guide lacks the installed-API part"
        run.warnings.append(f"introspection of the installed triton failed ({exc}); {level}")
        return previous if previous and entry_file_ok(run.cache_dir, previous) else None
    data = markdown.encode("utf-8")
    rel_file = f"{PAGES_DIR}/{INSTALLED_SLUG}.md"
    atomic_write(run.cache_dir / rel_file, data)
    if previous:
        run.index.pages.pop(previous.url, None)
    entry = IndexEntry(
        url=f"python:triton=={version}",
        slug=INSTALLED_SLUG,
        kind="installed",
        file=rel_file,
        title=f"Installed Triton API reference (triton {version})",
        fetched_at=now_iso(),
        checked_at=now_iso(),
        size=len(data),
        sha256=sha256_bytes(data),
        triton_version=version,
    )
    run.index.pages[entry.url] = entry
    save_index(run.cache_dir, run.index)
    return entry


def _best_practices(run: _Run) -> Path | None:
    """Copy references/triton-best-practices.md into the cache (keep an older copy if the source is gone)."""
    target = run.cache_dir / BEST_PRACTICES_FILE
    source = run.config.best_practices_path
    reason = ""
    if source is None:
        try:
            from ..skill_files import references_dir

            source = references_dir() / BEST_PRACTICES_FILE
        except FileNotFoundError as exc:
            source = None
            reason = f"the skill's references/ directory was not found ({exc})"
    if source is not None and Path(source).is_file():
        data = Path(source).read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            atomic_write(target, data)
        return target
    reason = f"{source} does not exist" if source is not None else reason
    run.warnings.append(f"triton-best-practices.md not copied: {reason}")
    return target if target.is_file() else None


def _combined(title: str, intro: str, parts: list[str]) -> str:
    return (
        f"# {title}\n\n<!-- generated by fetch_triton_docs from pages/; rebuilt on every call -->\n\n"
        f"{intro}\n\n" + ("\n\n---\n\n".join(p.strip() for p in parts) + "\n")
    )


def _version_warning(docs: str | None, installed: str | None, has_installed_ref: bool) -> str | None:
    if not docs or not installed or docs == installed:
        return None
    docs_mm = re.match(r"v?(\d+)\.(\d+)", docs)
    inst_mm = re.match(r"(\d+)\.(\d+)", installed)
    if docs_mm and inst_mm and docs_mm.groups() == inst_mm.groups():
        return None
    described = f"Triton {docs}" if docs_mm else f"the '{docs}' branch of Triton (not a release)"
    advice = (
        f"the 'Installed Triton API reference' part of {GUIDE_FILE} matches {installed}"
        if has_installed_ref
        else "check signatures against the installed package"
    )
    return (
        f"version mismatch: the web docs describe {described} but the installed triton is {installed}: "
        f"{advice}"
    )


def fetch_docs(
    cache_dir: Path,
    *,
    topic: str | None = None,
    refresh: bool = False,
    offline: bool = False,
    max_chars: int = 12000,
    config: DocsConfig | None = None,
    client: httpx.Client | None = None,
    on_event: EventFn | None = None,
) -> DocsResult:
    """Make sure cache_dir holds the Triton guide, tutorials and best practices; answer ``topic`` from it."""
    config = config or DocsConfig()
    if not config.base_url.endswith("/"):
        config = config.model_copy(update={"base_url": config.base_url + "/"})
    emit: EventFn = on_event or (lambda _message, _fraction: None)
    cache_dir = prepare_cache_dir(Path(cache_dir))
    with cache_lock(cache_dir, config.lock_timeout_s):
        clean_temp_files(cache_dir)
        warnings: list[str] = []
        index = load_index(cache_dir, warnings)
        index.base_url = config.base_url
        run = _Run(cache_dir=cache_dir, config=config, index=index, emit=emit, warnings=warnings)
        if offline:
            _update_pages(run, None, refresh=False)
        else:
            with Fetcher(config, client) as fetcher:
                _update_pages(run, fetcher, refresh=refresh)
        return _finish(run, topic=topic, refresh=refresh, offline=offline, max_chars=max_chars)


def _finish(run: _Run, *, topic: str | None, refresh: bool, offline: bool, max_chars: int) -> DocsResult:
    cache_dir, config = run.cache_dir, run.config
    api = [u for u in run.uses if u.include and u.entry.kind == "api"]
    tutorials = [u for u in run.uses if u.include and u.entry.kind == "tutorial"]
    installed = installed_triton_version(config.python)
    wants_reference = config.installed_reference or not api
    reference = (
        _installed_reference(run, installed, refresh=refresh, needed=not api) if wants_reference else None
    )
    if reference is not None:
        installed = installed or reference.triton_version
    if not api and not tutorials and reference is None:
        why = (
            "offline=true"
            if offline
            else "; ".join(f.reason for f in run.failures[:2]) or "no pages configured"
        )
        raise DocsError(
            f"no Triton docs available: {why}; nothing cached in {cache_dir}; and the installed triton could "
            f"not be introspected ({'; '.join(run.warnings[-1:])}). Connect to the network and call "
            "fetch_triton_docs again, or install triton in the interpreter given as DocsConfig.python."
        )
    versions = [u.entry.triton_version for u in api if u.entry.triton_version]
    docs_version = (
        max(set(versions), key=versions.count)
        if versions
        else (reference.triton_version if reference else None)
    )
    run.index.triton_version_docs = docs_version
    run.index.triton_version_installed = installed
    origins = {u.origin for u in api + tutorials}
    if not api and reference is not None:
        origins.add("offline-introspection")
        run.warnings.append(
            f"no web copy of the language reference (offline or not cached): {GUIDE_FILE} was built from the "
            f"installed triton {reference.triton_version} by introspection"
        )
    source = origins.pop() if len(origins) == 1 else ("mixed" if origins else "none")

    def text(entry: IndexEntry) -> str:
        return (cache_dir / entry.file).read_text(encoding="utf-8")

    files: list[Path] = []
    guide_parts = [text(u.entry) for u in api] + ([text(reference)] if reference else [])
    if guide_parts:
        intro = (
            "Language reference (triton.language), triton.testing and the autotune / Config / heuristics "
            "API. "
            f"Web docs: {config.base_url} ({len(api)} pages, Triton {docs_version if api else 'n/a'}); "
            f"installed triton: {installed or 'unknown'}. Per-page files are in pages/, sources in "
            "index.json."
        )
        atomic_write(cache_dir / GUIDE_FILE, _combined("Triton language guide", intro, guide_parts))
        files.append(cache_dir / GUIDE_FILE)
    if tutorials:
        intro = f"The official Triton tutorials from {config.base_url} ({len(tutorials)} pages)."
        atomic_write(
            cache_dir / TUTORIALS_FILE,
            _combined("Triton tutorials", intro, [text(u.entry) for u in tutorials]),
        )
        files.append(cache_dir / TUTORIALS_FILE)
    else:
        run.warnings.append(f"{TUTORIALS_FILE} not written: no tutorial page fetched or cached")
    best = _best_practices(run)
    if best:
        files.append(best)
    page_entries = [u.entry for u in api + tutorials] + ([reference] if reference else [])
    files += [cache_dir / e.file for e in page_entries]
    mismatch = _version_warning(docs_version if api else None, installed, reference is not None)
    if mismatch:
        run.warnings.append(mismatch)
    if run.failures:
        run.warnings.append(f"{len(run.failures)} page(s) failed; see pages_failed")
    save_index(cache_dir, run.index)

    result = DocsResult(
        cache_dir=str(cache_dir),
        files=[str(f) for f in files],
        pages_fetched=run.fetched,
        pages_not_modified=run.not_modified,
        pages_cached=run.cached,
        pages_failed=run.failures,
        source=source,  # type: ignore[arg-type]
        triton_version_docs=docs_version,
        triton_version_installed=installed,
        warnings=run.warnings,
        topic=topic,
    )
    if topic and topic.strip():
        docs = [SearchDoc(cache_dir / e.file, e.url, text(e), 0) for e in [u.entry for u in api]]
        docs += (
            [SearchDoc(cache_dir / reference.file, reference.url, text(reference), 1)] if reference else []
        )
        docs += [SearchDoc(cache_dir / u.entry.file, u.entry.url, text(u.entry), 2) for u in tutorials]
        docs += (
            [SearchDoc(best, f"file:{BEST_PRACTICES_FILE}", best.read_text(encoding="utf-8"), 3)]
            if best
            else []
        )
        result.sections, result.truncated = search(docs, topic, max_chars)
        if not result.sections:
            result.warnings.append(
                f"no section matches {topic!r}; try a single API name such as 'tl.load' or 'autotune'"
            )
    result.summary = _summary(result, len(api), len(tutorials), reference is not None, best is not None)
    run.emit("docs: done", 1.0)
    return result


def _summary(result: DocsResult, n_api: int, n_tutorials: int, has_reference: bool, has_best: bool) -> str:
    parts = [
        f"Triton docs in {result.cache_dir}: {GUIDE_FILE} ({n_api} web pages"
        + (" + installed-API reference" if has_reference else "")
        + f"), {TUTORIALS_FILE} ({n_tutorials} tutorials)"
        + (f", {BEST_PRACTICES_FILE}" if has_best else "")
        + ".",
        f"This call: {result.pages_fetched} fetched, {result.pages_not_modified} unchanged (304), "
        f"{result.pages_cached} reused from cache, {len(result.pages_failed)} failed; "
        f"source: {result.source}.",
        f"Docs describe Triton {result.triton_version_docs or 'unknown'}; installed triton "
        f"{result.triton_version_installed or 'not found'}.",
    ]
    if result.topic:
        chars = sum(len(s.text) for s in result.sections)
        parts.append(
            f"Topic {result.topic!r}: {len(result.sections)} matching sections ({chars} chars"
            + (", truncated to max_chars" if result.truncated else "")
            + ")."
        )
    if result.warnings:
        parts.append(f"{len(result.warnings)} warning(s): {result.warnings[0]}")
    return " ".join(parts)
