"""Topic search over the cache: only the matching sections, with their source links, within a size budget."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .models import Section

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_PERMALINK = re.compile(r"\s*\[¶\]\((\S+?)(?:\s+\"[^\"]*\")?\)\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_MAX_SECTIONS = 24


@dataclass(frozen=True)
class SearchDoc:
    """One markdown file to search; ``rank`` breaks ties (API pages before tutorials before guides)."""

    file: Path
    page_url: str
    markdown: str
    rank: int


@dataclass(frozen=True)
class _Chunk:
    title: str
    url: str
    text: str


def split_sections(markdown: str, page_url: str) -> list[_Chunk]:
    """Split at ATX headings outside code fences; each chunk is one heading and the text up to the next."""
    chunks: list[_Chunk] = []
    title, url, lines = "", page_url, []
    in_fence = False

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            chunks.append(_Chunk(title or page_url, url, body))

    for line in markdown.splitlines():
        if not in_fence and _COMMENT.match(line):
            continue  # the page's provenance comment is not content
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            flush()
            heading = match.group(2)
            link = _PERMALINK.search(heading)
            url = link.group(1) if link else page_url
            title = _PERMALINK.sub("", heading).replace("`", "").strip()
            lines = [line]
            continue
        lines.append(line)
    flush()
    # A heading with nothing under it (a page title just before its first signature) is no answer on its own.
    return [c for c in chunks if c.text.count("\n") > 0 or not _HEADING.match(c.text)]


_NAMESPACES = ("triton.language.", "tl.", "triton.testing.", "triton.")


def _patterns(topic: str) -> tuple[list[str], re.Pattern[str] | None, list[str]]:
    """(qualified spellings of the topic, bare-name pattern, words of a free-text topic)."""
    topic = topic.strip().lower()
    name = topic
    for prefix in _NAMESPACES:
        if topic.startswith(prefix):
            name = topic[len(prefix) :]
            break
    # "tl.dot" and "triton.language.dot" are one name; a bare "autotune" also means "triton.autotune".
    variants = sorted({topic} | ({p + name for p in _NAMESPACES} if re.fullmatch(r"\w+", name) else set()))
    bare = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)") if re.fullmatch(r"\w+", name) else None
    words = [w for w in re.split(r"[^\w.]+", topic) if len(w) > 1] if " " in topic else []
    return variants, bare, words


def _score(chunk: _Chunk, variants: list[str], bare: re.Pattern[str] | None, words: list[str]) -> int:
    title = chunk.title.lower().removeprefix("class ").strip()
    body = chunk.text.lower()
    score = 0
    if any(re.match(rf"{re.escape(v)}(?![\w.])", title) for v in variants):
        score += 120  # the definition itself (a signature heading or the object's page)
    elif bare and bare.search(title) or (words and all(w in title for w in words)):
        score += 60
    mentions = sum(len(re.findall(rf"(?<![\w.]){re.escape(v)}(?!\w)", body)) for v in variants)
    score += 3 * min(mentions, 10)
    if words and all(w in body for w in words):
        score += 2
    return score


def search(docs: list[SearchDoc], topic: str, max_chars: int) -> tuple[list[Section], bool]:
    """Sections matching topic, best first, fitting in max_chars; True when some were cut or left out."""
    qualified, bare, words = _patterns(topic)
    scored: list[tuple[int, int, int, SearchDoc, _Chunk]] = []
    order = 0
    for doc in docs:
        for chunk in split_sections(doc.markdown, doc.page_url):
            score = _score(chunk, qualified, bare, words)
            if score > 0:
                scored.append((-score, doc.rank, order, doc, chunk))
            order += 1
    scored.sort(key=lambda item: item[:3])
    sections: list[Section] = []
    used, truncated, seen = 0, False, set()
    for _neg, _rank, _order, doc, chunk in scored:
        if chunk.text in seen:
            continue
        seen.add(chunk.text)
        room = max_chars - used
        text = chunk.text
        if len(text) > room:
            truncated = True
            if sections:
                continue  # keep looking for smaller sections that still fit
            note = f"\n\n[... cut to fit max_chars; the full section is in {doc.file}]"
            text = text[: max(room - len(note), 0)].rstrip() + note
        sections.append(Section(title=chunk.title, source_url=chunk.url, file=str(doc.file), text=text))
        used += len(text)
        if len(sections) >= _MAX_SECTIONS:
            truncated = truncated or len(scored) > len(sections)
            break
    return sections, truncated
