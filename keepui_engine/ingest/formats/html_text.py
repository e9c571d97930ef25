"""Visible text from HTML open/close/text events: which elements count and where lines end."""

from __future__ import annotations

import re
from collections.abc import Callable

from keepui_engine.ingest import deadline

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
        "title",
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
        # MediaWiki: "From Wikipedia, the free encyclopedia", "See also: ..." pointers, and the
        # "^ a b" back-links of a reference list
        "sitesub",
        "contentsub",
        "hatnote",
        "mw-cite-backlink",
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
# Inside a table cell these only separate items ("Divisions | Mozilla Corporation; Mozilla
# Foundation"), so an infobox row stays one line; paragraphs and headings still end lines.
_CELL_ITEM_TAGS = frozenset({"div", "ul", "ol", "li", "dl", "dt", "dd", "center"})
_SECTION_HEADINGS = frozenset({"h1", "h2", "h3"})
_CELL_TAGS = frozenset({"td", "th"})
_DISPLAYSTYLE = re.compile(r"^\{\\displaystyle\s*(.*)\}$", re.S)
_SENTENCE_END = re.compile(r"[.!?…:;][\"'”’)\]]*$")
# How much of the end of the current block the collector keeps at hand: joining the whole
# block at every table cell or list item made a row of 400,000 cells quadratic (issue 23).
_TAIL = 64

Getter = Callable[[str], "str | None"]


def is_dropped(tag: str, get: Getter, in_article: bool) -> bool:
    """Whether an element and everything in it is left out of the text.

    Args:
        tag: The lower-case tag name.
        get: The element's attribute getter (None when absent).
        in_article: Whether the element is inside an <article>.
    """
    if tag in _DROP_TAGS or (tag in _CHROME_TAGS and not in_article):
        return True
    if get("hidden") is not None or get("aria-hidden") == "true":
        return True
    if (get("role") or "").lower() in _DROP_ROLES:
        return True
    tokens = (get("class") or "").lower().split() + (get("id") or "").lower().split()
    if tag == "sup" and "reference" in tokens:  # MediaWiki citation markers: [1]
        return True
    return any(t in _BOILERPLATE or t.startswith(_BOILERPLATE_PREFIXES) for t in tokens)


class TextCollector:
    """Turns open/close/text events into blocks: ("text" | "row" | "heading", text).

    Every block element ends a block; a table row ends a "row" block (its cells joined by
    " | "), and so does any other block inside a table, so a table reads as lines of its own.
    Feed it with `open` (False means: skip this element's subtree, and do not `close` it),
    `close` and `add`; the driver guarantees one `close` per accepted `open`.
    """

    def __init__(self) -> None:
        self.blocks: list[tuple[str, str]] = []
        self.buffer: list[str] = []
        self.raw_tail = ""  # the last _TAIL characters of the block so far
        self.tail = ""  # the same, up to its last non-space character
        self.events = 0
        self.pre = 0
        self.articles = 0
        self.tables = 0
        self.cells = 0

    def open(self, tag: str, get: Getter) -> bool:
        """An element starts; returns False when its subtree is to be skipped."""
        self.events += 1
        if self.events % 1024 == 0:
            deadline.check()
        if is_dropped(tag, get, self.articles > 0):
            return False
        if tag == "math":  # MathML: keep the TeX source of the formula, not its glyphs
            alt = (get("alttext") or "").strip()
            self.add(_DISPLAYSTYLE.sub(r"\1", alt).strip())
            return False
        if tag == "article":
            self.articles += 1
        self._boundary(tag)
        if tag == "table":
            self.tables += 1
        elif tag == "pre":
            self.pre += 1
        elif tag in _CELL_TAGS:
            if self.tail:
                self._push(" | ")
            self.cells += 1
        elif tag == "br":
            self._push("\n")
        return True

    def close(self, tag: str) -> None:
        """An element ends."""
        if tag in _SECTION_HEADINGS:
            self.flush("heading")
        else:
            self._boundary(tag)
        if tag == "table":
            self.tables = max(self.tables - 1, 0)
        elif tag == "pre":
            self.pre = max(self.pre - 1, 0)
        elif tag in _CELL_TAGS:
            self.cells = max(self.cells - 1, 0)
        elif tag == "article":
            self.articles = max(self.articles - 1, 0)

    def add(self, text: str | None) -> None:
        """Text content (outside <pre>, its newlines are spaces)."""
        if text:
            self._push(text if self.pre else text.replace("\n", " "))

    def _push(self, piece: str) -> None:
        self.buffer.append(piece)
        if len(piece) >= _TAIL:
            if not piece.isspace():
                kept = piece.rstrip()
                self.tail = kept[-_TAIL:] if len(kept) >= _TAIL else (self.raw_tail + kept)[-_TAIL:]
            self.raw_tail = piece[-_TAIL:]
            return
        if not piece.isspace():
            self.tail = (self.raw_tail + piece.rstrip())[-_TAIL:]
        self.raw_tail = (self.raw_tail + piece)[-_TAIL:]

    def _boundary(self, tag: str) -> None:
        if tag not in _BLOCK_TAGS:
            return
        if self.cells and tag in _CELL_ITEM_TAGS:
            self._separate()
        else:
            self.flush()

    def _separate(self) -> None:
        """Within a cell: items of a list or stacked divs follow each other on the row."""
        so_far = self.tail
        if so_far and not so_far.endswith("|"):
            self._push(" " if _SENTENCE_END.search(so_far) else "; ")

    def flush(self, kind: str = "text") -> None:
        """End the current block (a heading when `kind` says so)."""
        lines = (" ".join(line.split()) for line in "".join(self.buffer).split("\n"))
        text = "\n".join(line.strip(" |;") for line in lines if line.strip(" |;"))
        self.buffer.clear()
        self.raw_tail = self.tail = ""
        if text:
            self.blocks.append((kind if kind == "heading" or not self.tables else "row", text))
