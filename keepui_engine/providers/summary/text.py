"""Text helpers shared by the summarizers: length cuts, paragraphs and a sentence splitter."""

from __future__ import annotations

import re

ELLIPSIS = "…"

_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_BLANK_LINES = re.compile(r"\n\s*\n")
_TRAILING_JOINERS = ",;:-–—([{/"

# A candidate boundary: terminal punctuation, optional closing quotes/brackets, whitespace, and a
# next sentence that starts with a capital, a digit or an opening quote/bracket.
_BOUNDARY = re.compile(r"([.!?…]+)([\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9À-Ý])")
_LAST_TOKEN = re.compile(r"(\S+)$")
_ENDS_SENTENCE = re.compile(r"[.!?…:][\"'”’)\]]*$")
_STARTS_SENTENCE = re.compile(r"[\"'“‘(\[]?[A-Z0-9À-Ý]")
# A line shorter than this share of its paragraph's longest line, with room left for the next
# word, was broken on purpose (a title, a label, a list line), not wrapped.
SOFT_WRAP_SHARE = 0.75
_MULTI_INITIAL = re.compile(r"^(?:[a-z]\.)+[a-z]$")

# Tokens (lower-cased, without the final period) after which a period never ends a sentence.
_ABBREVIATION_TEXT = (
    "e.g i.e cf vs viz al approx ca resp mr mrs ms dr prof sr jr st mt gen col lt sgt rev "
    "hon inc ltd co corp dept univ est"
)
ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
# Abbreviations that precede a number ("Fig. 3", "No. 5", "Jan. 12"): no split before a digit.
_NUMBER_ABBREVIATION_TEXT = (
    "fig figs no nos vol vols p pp eq eqs sec ch art ref refs tab jan feb mar apr jun jul "
    "aug sep sept oct nov dec"
)
NUMBER_ABBREVIATIONS = frozenset(_NUMBER_ABBREVIATION_TEXT.split())


def normalize(text: str) -> str:
    """Collapse every run of whitespace (newlines included) into one space."""
    return " ".join(text.split())


def cut(text: str, max_chars: int) -> str:
    """Cut `text` to at most `max_chars` characters at a word boundary, ending in "…".

    Args:
        text: Already normalised text.
        max_chars: The limit, counting the ellipsis.

    Returns:
        The text itself when it fits; otherwise the longest prefix ending at a word boundary
        (or a hard cut when the only boundary is in the first half) followed by "…".
    """
    text = text.strip()
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return text[:max_chars]
    head = text[: max_chars - 1]
    if not text[max_chars - 1].isspace():
        space = max(head.rfind(" "), head.rfind("\n"))
        if space > max_chars // 2:
            head = head[:space]
    return head.rstrip().rstrip(_TRAILING_JOINERS).rstrip() + ELLIPSIS


def paragraphs(text: str) -> list[str]:
    """The non-empty, blank-line separated paragraphs of `text`, each stripped."""
    return [p.strip() for p in _BLANK_LINES.split(text.replace("\r\n", "\n")) if p.strip()]


def is_heading_line(line: str) -> bool:
    """Whether `line` is a markdown ATX heading ("# Title")."""
    return bool(_HEADING.match(line))


def strip_heading(line: str) -> str:
    """A heading line without its leading hashes (and optional closing hashes)."""
    return line.strip().lstrip("#").strip().rstrip("#").strip()


def is_table_row(line: str) -> bool:
    """Whether a line is a table row: markdown (`| a | b |`), cells joined by " | ", or tabs."""
    stripped = line.strip()
    return stripped.startswith("|") or " | " in stripped or "\t" in stripped


def _hard_break(line: str, following: str, width: int) -> bool:
    """Whether a single newline between two lines of one paragraph ends a unit.

    A line break is a soft wrap (the lines join) unless the next line starts like a new
    sentence (a capital, a digit, a quote or bracket) and the line before either ends a
    sentence (or a lead-in ending in ":") or stops well short of the paragraph's width, so
    the next word would have fitted on it: a label, a title or a list line. A period after
    an abbreviation or an initial ends nothing.
    """
    if not _STARTS_SENTENCE.match(following):
        return False
    if _ENDS_SENTENCE.search(line):
        token = _LAST_TOKEN.search(line)
        word = token.group(1).rstrip(".").lstrip("([\"'“‘").lower() if token else ""
        initial = len(word) == 1 and word.isalpha()
        return not (word in ABBREVIATIONS or initial or _MULTI_INITIAL.match(word))
    next_word = following.split(maxsplit=1)[0]
    return len(line) + 1 + len(next_word) < SOFT_WRAP_SHARE * width


def units(text: str) -> list[str]:
    """Blocks that sentences never cross: paragraphs, list items and hard-broken lines.

    Headings, setext underlines, horizontal rules, table rows and fenced code are dropped: they
    are not sentences a summary should quote. Soft-wrapped lines inside a paragraph are joined;
    a line that ends a sentence or stops short before a capitalised line is not joined to it
    (`_hard_break`), so a run of labels or a title never glues onto the paragraph below.
    """
    out: list[str] = []
    in_fence = False
    for para in paragraphs(text):
        lines = para.split("\n")
        width = max(len(line.strip()) for line in lines)
        current: list[str] = []
        for line in lines:
            if _FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            stripped = line.strip()
            if _SETEXT_UNDERLINE.match(line) and current:
                current.pop()  # the line above was a setext heading
            if (
                is_heading_line(line)
                or _SETEXT_UNDERLINE.match(line)
                or is_table_row(line)
                or not stripped
            ):
                if current:
                    out.append(" ".join(current))
                    current = []
                continue
            item = _LIST_ITEM.match(line)
            if item:
                if current:
                    out.append(" ".join(current))
                current = [line[item.end() :].strip()]
            elif current and _hard_break(current[-1], stripped, width):
                out.append(" ".join(current))
                current = [stripped]
            else:
                current.append(stripped)
        if current:
            out.append(" ".join(current))
    return [normalize(u) for u in out if u.strip()]


def _is_boundary(unit: str, match: re.Match[str]) -> bool:
    """Whether a candidate boundary really ends a sentence (abbreviations and initials do not)."""
    if match.group(1) != ".":
        return True
    token = _LAST_TOKEN.search(unit, 0, match.start())
    if token is None:
        return True
    word = token.group(1).lstrip("([\"'“‘").lower()
    if word in ABBREVIATIONS or _MULTI_INITIAL.match(word):
        return False
    if len(word) == 1 and word.isalpha():  # an initial: "J. Smith"
        return False
    next_char = unit[match.end() : match.end() + 1]
    return not (word in NUMBER_ABBREVIATIONS and next_char.isdigit())


def unit_sentences(unit: str) -> list[str]:
    """The sentences of one unit (see `split_sentences` for where they end)."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(unit):
        if _is_boundary(unit, match):
            sentences.append(unit[start : match.end(2)].strip())
            start = match.end()
    tail = unit[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


def split_sentences(text: str) -> list[str]:
    """Split `text` into sentences, in order, each whitespace-normalised.

    Sentences end at ". ! ? …" (plus closing quotes or brackets) followed by whitespace and a
    capital, digit or opening quote; paragraph breaks, list items and hard line breaks
    (`units`) always end one. A period after a known abbreviation ("e.g.", "Dr.", "et al."),
    an initial ("J.") or a number abbreviation before a digit ("Fig. 3") does not. Headings,
    table rows and fenced code are left out.

    Args:
        text: Plain text or markdown.

    Returns:
        The sentences; every one is a run of the text's words in their original order.
    """
    return [s for unit in units(text) for s in unit_sentences(unit)]
