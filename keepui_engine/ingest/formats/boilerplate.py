"""Running heads and feet of paged documents: lines a reader skips, left out of the text.

A line among the first or last EDGE lines of a page is a running line when, with its digits
read as one placeholder (page numbers, dates of a print run), it recurs at the same edge of
at least half the pages (and at least MIN_PAGES of them): the journal's title and issue over
every page, a print-shop stamp under it, `Page 3 of 15`. A line that is only a page number
(in the first or last two lines) is one too; a line over LONGEST characters never is, and a
page keeps its lines when every one of them would go.
Footnote markers written as superscript digits are taken off the words they follow.
Documents of fewer than MIN_PAGES pages are left as they are: nothing recurs often enough to
tell a running line from the text.
"""

from __future__ import annotations

import re
from collections import Counter

EDGE = 12
NUMBER_EDGE = 2  # a bare page number: in the first or last two lines
LONGEST = 100  # characters: a longer line is text (a paragraph set as one line), never a head
MIN_PAGES = 3
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^\s*(?:page\s*)?[-–(\[]?\s*\d{1,6}\s*[-–)\]]?(?:\s*of\s*\d+)?\s*$", re.I
)
_SUPERSCRIPT = re.compile(r"(?<=[^\W\d])[¹²³⁴⁵⁶⁷⁸⁹⁰]+")


def _shape(line: str) -> str | None:
    """The line with its digits as one placeholder; None for a line too long to be a head."""
    flat = " ".join(line.split())
    return _DIGITS.sub("#", flat.lower()) if len(flat) <= LONGEST else None


def _edge(lines: list[int]) -> int:
    """How many lines at each end of a page may be running lines (a figure's page may be
    only its stamp and caption: the whole of a short page counts)."""
    return min(EDGE, len(lines))


def strip_running_lines(pages: list[str]) -> tuple[list[str], int]:
    """The pages' texts without their running heads and feet; and how many lines went.

    Args:
        pages: Each page's text, lines separated by newlines.
    """
    if len(pages) < MIN_PAGES:
        return [_SUPERSCRIPT.sub("", p) for p in pages], 0
    split = [p.split("\n") for p in pages]
    filled = [[i for i, ln in enumerate(page) if ln.strip()] for page in split]
    heads: Counter[str | None] = Counter()
    feet: Counter[str | None] = Counter()
    for page, at in zip(split, filled, strict=True):
        edge = _edge(at)
        heads.update({_shape(page[i]) for i in at[:edge]} - {None})
        feet.update({_shape(page[i]) for i in at[len(at) - edge :]} - {None})
    need = max(MIN_PAGES, (len(pages) + 1) // 2)
    running_heads = {s for s, n in heads.items() if n >= need}
    running_feet = {s for s, n in feet.items() if n >= need}
    out, dropped = [], 0
    for page, at in zip(split, filled, strict=True):
        cut = set()
        edge = _edge(at)
        for rank, i in enumerate(at):
            shape = _shape(page[i])
            head = rank < edge and shape in running_heads
            foot = rank >= len(at) - edge and shape in running_feet
            outer = rank < NUMBER_EDGE or rank >= len(at) - NUMBER_EDGE
            if head or foot or (outer and _PAGE_NUMBER.match(page[i])):
                cut.add(i)
        if len(cut) == len(at):
            cut = set()  # never a whole page: what is all heads is a page of its own
        dropped += len(cut)
        kept = "\n".join(ln for i, ln in enumerate(page) if i not in cut).strip()
        out.append(_SUPERSCRIPT.sub("", kept))
    return out, dropped
