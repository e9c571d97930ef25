"""HTML events of any nesting depth from the standard library's tokenizer, past libxml2's limits."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from html.parser import HTMLParser

from keepui_engine.ingest.formats.html_text import TextCollector


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


VOID = _tags("area base br col embed hr img input keygen link meta param source track wbr")
_SCOPE = _tags("table td th caption html body button object template marquee applet")
_TABLE_PARTS = _tags("table caption tbody thead tfoot tr td th")
_HEADINGS = _tags("h1 h2 h3 h4 h5 h6")
_CLOSES_P = _tags(
    "address article aside blockquote center details dialog dir div dl dd dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav ol p "
    "pre section table ul"
)
_LIST_BOUNDS = _tags("ul ol dl table td th button object template")
_SECTIONS = _tags("tbody thead tfoot tr td th")
# A start tag closes the open elements it implies an end for (the outermost one above the
# nearest bound, and everything inside it): a simplified HTML tree-construction step.
_IMPLIED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), _LIST_BOUNDS - {"dl"}),
    "dt": (frozenset({"dt", "dd"}), _LIST_BOUNDS - {"ul", "ol"}),
    "dd": (frozenset({"dt", "dd"}), _LIST_BOUNDS - {"ul", "ol"}),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "tbody", "thead", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "tbody": (_SECTIONS, frozenset({"table"})),
    "thead": (_SECTIONS, frozenset({"table"})),
    "tfoot": (_SECTIONS, frozenset({"table"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist"})),
}


class _Stream(HTMLParser):
    """Keeps the stack of open elements as a list, so depth costs memory, never recursion.

    `where[tag]` holds the stack positions of the open elements of that tag (ascending), so
    each implied or explicit end tag is found in O(log depth), not by scanning the stack.
    """

    def __init__(self, out: TextCollector) -> None:
        super().__init__(convert_charrefs=True)
        self.out = out
        self.stack: list[str] = []
        self.where: defaultdict[str, list[int]] = defaultdict(list)
        self.skip_from: int | None = None  # stack position of the dropped element we are in
        self.title_at: int | None = None
        self.title: list[str] = []
        self.titled = False

    def _nearest(self, tags: frozenset[str]) -> int:
        return max((self.where[t][-1] for t in tags if self.where.get(t)), default=-1)

    def _outermost_above(self, tags: frozenset[str], bound: int) -> int | None:
        found = []
        for tag in tags:
            positions = self.where.get(tag)
            if positions:
                i = bisect_right(positions, bound)
                if i < len(positions):
                    found.append(positions[i])
        return min(found, default=None)

    def _pop_to(self, position: int) -> None:
        """Close every open element from the top of the stack down to `position`."""
        while len(self.stack) > position:
            tag = self.stack.pop()
            here = len(self.stack)
            self.where[tag].pop()
            if here == self.title_at:
                self.title_at = None
            if self.skip_from is None:
                self.out.close(tag)
            elif here == self.skip_from:
                self.skip_from = None

    def _imply_ends(self, tag: str) -> None:
        if tag in _CLOSES_P and self.where.get("p"):
            found = self._outermost_above(frozenset({"p"}), self._nearest(_SCOPE))
            if found is not None:
                self._pop_to(found)
        if tag in _IMPLIED:
            closes, bounds = _IMPLIED[tag]
            found = self._outermost_above(closes, self._nearest(bounds))
            if found is not None:
                self._pop_to(found)
        if tag in _HEADINGS and self.stack and self.stack[-1] in _HEADINGS:
            self._pop_to(len(self.stack) - 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._imply_ends(tag)
        values: dict[str, str] = {}
        for key, value in attrs:
            values.setdefault(key, value or "")  # the first of repeated attributes wins
        if tag in VOID:
            if self.skip_from is None and self.out.open(tag, values.get):
                self.out.close(tag)
            return
        position = len(self.stack)
        self.stack.append(tag)
        self.where[tag].append(position)
        if tag == "title" and not self.titled:
            self.title_at, self.titled = position, True
        if self.skip_from is None and not self.out.open(tag, values.get):
            self.skip_from = position

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        positions = self.where.get(tag)
        if tag in VOID or tag in ("html", "body") or not positions:
            return
        target = positions[-1]
        if tag in _TABLE_PARTS:
            bound = -1 if tag == "table" else self._nearest(frozenset({"table"}))
        else:
            bound = self._nearest(_SCOPE)
        if bound <= target:
            self._pop_to(target)

    def handle_data(self, data: str) -> None:
        if self.title_at is not None:
            self.title.append(data)
        if self.skip_from is None:
            self.out.add(data)


def collect(markup: str) -> tuple[str, list[tuple[str, str]]]:
    """Tokenize a whole page and collect its visible text.

    Args:
        markup: The decoded page.

    Returns:
        The <title> text ("" when none) and the collector's blocks.
    """
    out = TextCollector()
    stream = _Stream(out)
    stream.feed(markup)
    stream.close()
    stream._pop_to(0)
    out.flush()
    return " ".join("".join(stream.title).split()), out.blocks
