"""HTML via lxml: visible article text without scripts, navigation or boilerplate blocks."""

from __future__ import annotations

import codecs
import re
from typing import Any

from keepui_engine.ingest.extract import HTML, Extracted, ExtractError, Limits, Section

_DROP_TAGS = frozenset(
    [
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "nav",
        "aside",
        "form",
        "head",
        "iframe",
        "object",
        "embed",
        "canvas",
        "button",
        "select",
        "textarea",
        "input",
        "dialog",
    ]
)
# Page chrome; kept when inside an <article>, where <header> holds the article's own title.
_CHROME_TAGS = frozenset({"header", "footer"})
_DROP_ROLES = frozenset(
    [
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "menu",
        "menubar",
        "toolbar",
        "dialog",
    ]
)
_BOILERPLATE = frozenset(
    [
        "sidebar",
        "navbar",
        "navbox",
        "footer",
        "toc",
        "catlinks",
        "breadcrumb",
        "breadcrumbs",
        "cookie-banner",
        "skip-link",
        "noprint",
        "printfooter",
        "mw-navigation",
        "mw-panel",
        "mw-head",
        "mw-editsection",
        "mw-jump-link",
        "mw-jump",
        "jump-to-nav",
        "mw-indicators",
        "site-header",
        "site-footer",
    ]
)
_BOILERPLATE_PREFIXES = ("navbox", "sidebar", "footer", "mw-navigation", "mw-editsection")
_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "footer",
        "hr",
        "html",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "ul",
    ]
)
_SECTION_HEADINGS = frozenset({"h1", "h2", "h3"})
_CELL_TAGS = frozenset({"td", "th"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_DISPLAYSTYLE = re.compile(r"^\{\\displaystyle\s*(.*)\}$", re.S)
# WHATWG: these labels mean windows-1252 in HTML; UTF-16 labels without a BOM mean UTF-8.
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252"}


def decode_html(data: bytes) -> str:
    """Decode HTML bytes: a BOM wins, then `<meta charset>`, else UTF-8 with replacement."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    encoding = "utf-8"
    found = _META_CHARSET.search(data[:4096])
    if found:
        label = found.group(1).decode("ascii").lower()
        label = _CHARSET_ALIASES.get(label, label)
        try:
            if not codecs.lookup(label).name.startswith(("utf-16", "utf-32")):
                encoding = label
        except LookupError:
            pass
    return data.decode(encoding, errors="replace")


def _is_dropped(el: Any, in_article: bool) -> bool:
    tag = el.tag
    if not isinstance(tag, str):  # entities; the parser already removed comments and PIs
        return True
    tag = tag.lower()
    if tag in _DROP_TAGS or (tag in _CHROME_TAGS and not in_article):
        return True
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    if (el.get("role") or "").lower() in _DROP_ROLES:
        return True
    tokens = (el.get("class") or "").lower().split() + (el.get("id") or "").lower().split()
    return any(t in _BOILERPLATE or t.startswith(_BOILERPLATE_PREFIXES) for t in tokens)


class _TextCollector:
    """Turns the element stream into blocks: ("text", line) or ("heading", title)."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, str]] = []
        self.buffer: list[str] = []
        self.pre = 0

    def add(self, text: str | None) -> None:
        if text:
            self.buffer.append(text if self.pre else text.replace("\n", " "))

    def cell(self) -> None:
        if "".join(self.buffer).strip():
            self.buffer.append(" | ")

    def flush(self, kind: str = "text") -> None:
        lines = (" ".join(line.split()) for line in "".join(self.buffer).split("\n"))
        text = "\n".join(line for line in lines if line)
        self.buffer.clear()
        if text:
            self.blocks.append((kind, text))


def _collect(root: Any) -> list[tuple[str, str]]:
    from lxml import etree

    out = _TextCollector()
    walker = etree.iterwalk(root, events=("start", "end"))
    articles = 0
    dropped: set[Any] = set()
    for event, el in walker:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if event == "start":
            if _is_dropped(el, articles > 0):
                dropped.add(el)
                walker.skip_subtree()
                continue
            if tag == "article":
                articles += 1
            if tag in _BLOCK_TAGS:
                out.flush()
            if tag == "pre":
                out.pre += 1
            if tag in _CELL_TAGS:
                out.cell()
            if tag == "br":
                out.buffer.append("\n")
            if tag == "math":
                alt = (el.get("alttext") or "").strip()
                out.add(_DISPLAYSTYLE.sub(r"\1", alt).strip())
                dropped.add(el)
                walker.skip_subtree()
                continue
            out.add(el.text)
            continue
        if el in dropped:
            dropped.discard(el)
        else:
            if tag in _SECTION_HEADINGS:
                out.flush("heading")
            elif tag in _BLOCK_TAGS:
                out.flush()
            if tag == "pre":
                out.pre -= 1
            if tag == "article":
                articles -= 1
        out.add(el.tail)
    out.flush()
    return out.blocks


def _sections(blocks: list[tuple[str, str]]) -> list[Section]:
    groups: list[tuple[str | None, list[str]]] = []
    for kind, text in blocks:
        if kind == "heading":
            groups.append((text, [text]))
        elif groups and groups[-1][0] is not None:
            groups[-1][1].append(text)
        else:
            groups.append((None, [text]))
    return [
        Section("\n".join(texts), "paragraph" if title is None else "heading", number, title)
        for number, (title, texts) in enumerate(groups, 1)
    ]


def extract_html(data: bytes, name: str, limits: Limits) -> Extracted:
    """Extract an HTML page: visible text, one heading section per h1-h3.

    Scripts, styles, forms, navigation, page header/footer, asides and elements whose
    role, class or id mark them as navigation or chrome are left out. Block elements
    end lines; whitespace is collapsed. Text before the first heading becomes paragraph
    sections.

    Args:
        data: The page bytes.
        name: The input's name or URL path, for messages.
        limits: Unused beyond the checks `extract` made; kept for a uniform signature.

    Returns:
        The sections joined by blank lines; tag title from <title>.

    Raises:
        ExtractError: The page cannot be parsed.
    """
    import lxml.html
    from lxml import etree

    markup = _XML_DECL.sub("", decode_html(data), count=1)
    try:
        parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True)
        root = lxml.html.document_fromstring(markup, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ExtractError(f"{name}: HTML page with no parsable content ({exc}).") from exc
    tags: dict[str, str] = {}
    title_el = root.find(".//title")
    if title_el is not None:
        title = " ".join(title_el.text_content().split())
        if title:
            tags["title"] = title
    body = root.find("body")
    sections = _sections(_collect(body if body is not None else root))
    return Extracted("\n\n".join(s.text for s in sections), HTML, tags, sections, [], [])
