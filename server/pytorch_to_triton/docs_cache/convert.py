"""Sphinx HTML (triton-lang.org) to markdown: content only, with code, signatures, tables and links kept."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

# Theme chrome (sphinx_rtd_theme, pydata, sphinx-gallery) that says nothing about Triton.
_DROP_SELECTORS = (
    "script, style, noscript, nav, header, footer, form, img, svg, button, iframe, link, meta",
    ".wy-nav-side, .wy-breadcrumbs, .rst-versions, .rst-footer-buttons, [role=navigation], [role=search]",
    ".bd-sidebar, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header, .bd-footer, .sphinxsidebar",
    ".related, .footer, .prev-next-area, .toc-drawer, .sidebar-drawer",
    ".sphx-glr-download-link-note, .sphx-glr-footer, .sphx-glr-signature, .sphx-glr-timing",
    ".sphx-glr-thumbnails, .sphx-glr-download, .copybutton",
)
_CONTENT_SELECTORS = ('[itemprop="articleBody"]', '[role="main"]', "main", "article", "div.body", "body")
_VERSION_PATTERNS = (
    re.compile(r"""VERSION:\s*['"]([^'"]+)['"]"""),
    re.compile(r"Triton\s+v?(\d+\.\d+[\w.+-]*)\s+documentation", re.I),
)


@dataclass
class ConvertedPage:
    """A page as markdown plus what the cache needs to know about it."""

    title: str
    markdown: str
    version: str | None
    links: list[str] = field(default_factory=list)


class _Converter(MarkdownConverter):
    def convert_dt(self, el: Tag, text: str, *args: object, **kwargs: object) -> str:
        # Field lists ("Parameters", "Returns") read better as bold labels than as bare lines.
        text = text.strip()
        return f"\n\n**{text}**\n\n" if text else ""

    def convert_dd(self, el: Tag, text: str, *args: object, **kwargs: object) -> str:
        return f"\n{text.strip()}\n\n" if text.strip() else ""


def _code_language(el: Tag) -> str:
    for node in [el, *el.parents]:
        for cls in node.get("class") or []:
            if cls.startswith("highlight-"):
                language = cls[len("highlight-") :].lower()
                return "" if language in ("none", "default", "text") else language
        if node.name in ("section", "body"):
            break
    return ""


def detect_version(soup: BeautifulSoup, html: str) -> str | None:
    """The Triton version a Sphinx page documents, when the page says (options script, title, switcher)."""
    for pattern in _VERSION_PATTERNS:
        match = pattern.search(html)
        if match and match.group(1).strip():
            return match.group(1).strip()
    current = soup.select_one(".rst-current-version")
    if current:
        match = re.search(r"v:\s*(\S+)", current.get_text(" ", strip=True))
        if match:
            return match.group(1)
    return None


def version_from_url(base_url: str) -> str:
    """Version label implied by the site path (``main`` for https://triton-lang.org/main/)."""
    segments = [s for s in urlsplit(base_url).path.split("/") if s]
    return segments[-1] if segments else "unknown"


def _signatures_to_headings(root: Tag, soup: BeautifulSoup) -> None:
    # <dl class="py function"><dt class="sig">...</dt><dd>doc</dd></dl> -> a heading per signature, then
    # the doc, so each API object becomes its own searchable section with its permalink.
    for dl in root.select("dl.py"):
        depth = len(
            [
                p
                for p in dl.parents
                if isinstance(p, Tag) and p.name == "dl" and "py" in (p.get("class") or [])
            ]
        )
        level = min(2 + depth, 6)
        wrapper = soup.new_tag("div")
        for child in list(dl.children):
            if not isinstance(child, Tag):
                continue
            if child.name == "dt":
                link = child.select_one("a.headerlink")
                if link:
                    link.extract()
                for extra in child.select(".viewcode-link, a.reference.internal[href*='_modules']"):
                    extra.decompose()
                signature = re.sub(r"\s+", " ", child.get_text("", strip=False)).strip()
                signature = signature.replace("[source]", "").strip()
                heading = soup.new_tag(f"h{level}")
                code = soup.new_tag("code")
                code.string = signature
                heading.append(code)
                if link:
                    heading.append(" ")
                    heading.append(link)
                wrapper.append(heading)
            elif child.name == "dd":
                for part in list(child.children):
                    wrapper.append(part.extract())
        dl.replace_with(wrapper)


def html_to_markdown(html: str, url: str) -> ConvertedPage:
    """Convert one Sphinx page: drop nav/sidebars/footers, keep code blocks, signatures, tables and links."""
    soup = BeautifulSoup(html, "html.parser")
    version = detect_version(soup, html)
    title_tag = soup.find("title")
    title = re.split(r"\s+[—|-]\s+|\s+&mdash;\s+", title_tag.get_text(strip=True))[0] if title_tag else ""
    root: Tag = next((found for sel in _CONTENT_SELECTORS if (found := soup.select_one(sel))), soup)
    links: list[str] = []
    for anchor in root.find_all("a", href=True):
        absolute = urljoin(url, anchor["href"])
        anchor["href"] = absolute
        anchor.attrs.pop("title", None)  # "Link to this heading" and repeated names: noise in markdown
        if "headerlink" in (anchor.get("class") or []):
            anchor.insert_before(" ")
        target = urldefrag(absolute)[0]
        if target != url and target not in links:
            links.append(target)
    # Links are collected before the chrome goes: gallery thumbnails are how tutorials are discovered.
    for selector in _DROP_SELECTORS:
        for node in root.select(selector):
            node.decompose()
    _signatures_to_headings(root, soup)
    h1 = root.find("h1")
    if h1 and not title:
        title = h1.get_text(" ", strip=True).rstrip("¶").strip()
    converter = _Converter(
        heading_style="ATX",
        bullets="-",
        code_language_callback=_code_language,
        escape_underscores=False,
        escape_asterisks=False,
        strip_pre="strip",
    )
    markdown = converter.convert_soup(root)
    markdown = re.sub(r"[ \t]+\n", "\n", markdown)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"
    return ConvertedPage(title=title or url, markdown=markdown, version=version, links=links)


def text_to_markdown(text: str, url: str, content_type: str) -> ConvertedPage:
    """Markdown or Python source served raw (GitHub): markdown as is, Python as one fenced block."""
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    if name.endswith(".py") or "python" in content_type:
        return ConvertedPage(
            title=name, markdown=f"# {name}\n\n```python\n{text.strip()}\n```\n", version=None
        )
    return ConvertedPage(title=name, markdown=text.strip() + "\n", version=None)
