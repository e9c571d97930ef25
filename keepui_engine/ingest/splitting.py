"""Split a long document into parts: by structure first, then by size with overlap.

Pages, slides and fields (a caller's own parts, e.g. each indexed field of a LangGraph value)
are hard boundaries (one part each, split further only when too long);
headings and paragraphs are soft: consecutive small ones merge up to the chunk size, as in
the OpenJarvis chunking pipeline. Sizes count the embedding model's tokens when the caller
gives `count` (so a part is what one vector sees whole), else whitespace words.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

Count = Callable[[list[str]], list[int]]


class Costs:
    """Tokens of each whitespace word, counted once per distinct word (1 each without count)."""

    def __init__(self, count: Count | None) -> None:
        self._count = count
        self._known: dict[str, int] = {}

    def of(self, words: list[str]) -> list[int]:
        if self._count is None:
            return [1] * len(words)
        new = list({w for w in words if w not in self._known})
        if new:
            self._known.update(zip(new, self._count(new), strict=True))
        return [self._known[w] for w in words]

    def total(self, text: str) -> int:
        return sum(self.of(text.split()))


HARD = ("page", "slide", "field")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Block:
    """A structural unit of a document.

    Attributes:
        text: Its text.
        kind: page, slide, field (a part the caller chose), heading (a heading and what
            follows it), paragraph, table or body.
        index: 1-based page or slide number, or running number.
        title: Heading or slide title, when known.
    """

    text: str
    kind: str
    index: int
    title: str | None = None


@dataclass(frozen=True)
class PartText:
    """One part as the splitter makes it (numbered by the caller's order)."""

    kind: str
    title: str | None
    position: str
    text: str


def blocks_of_text(text: str) -> list[Block]:
    """Markdown headings start sections; otherwise blank-line paragraphs are the blocks."""
    lines = text.splitlines()
    if any(_HEADING.match(line) for line in lines):
        blocks: list[Block] = []
        title: str | None = None
        buf: list[str] = []
        for line in lines:
            m = _HEADING.match(line)
            if m:
                if "".join(buf).strip():
                    blocks.append(Block("\n".join(buf).strip(), "heading", len(blocks) + 1, title))
                title, buf = m.group(1), [line]
            else:
                buf.append(line)
        if "".join(buf).strip():
            blocks.append(Block("\n".join(buf).strip(), "heading", len(blocks) + 1, title))
        return blocks
    paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [Block(p, "paragraph", i) for i, p in enumerate(paras, 1)]


def split(
    text: str,
    blocks: list[Block] | None = None,
    *,
    chunk_size: int = 512,
    overlap: int = 64,
    min_size: int = 50,
    count: Count | None = None,
) -> list[PartText]:
    """The parts of a document, or [] when it is short and has no pages or slides.

    Args:
        text: The whole text.
        blocks: Its structure (from the extractor); None derives it from the text.
        chunk_size: Most tokens in a part.
        overlap: Tokens repeated between consecutive size-split windows.
        min_size: Soft blocks smaller than this merge with their neighbours.
        count: The model's tokens in each of a list of words; None counts words.

    Returns:
        Parts in document order; fewer than two parts means the document is not split.
    """
    if chunk_size < 1 or not 0 <= overlap < chunk_size:
        raise ValueError("chunk_size must be >= 1 and 0 <= overlap < chunk_size")
    blocks = [b for b in (blocks if blocks is not None else blocks_of_text(text)) if b.text.strip()]
    has_hard = any(b.kind in HARD for b in blocks)
    costs = Costs(count)
    if not has_hard and costs.total(text) <= chunk_size:
        return []
    groups = _group(blocks, chunk_size, min_size, costs)
    parts: list[PartText] = []
    for group in groups:
        words = " ".join(b.text for b in group).split()
        where = _position(group)
        title = next((b.title for b in group if b.title), None)
        kind = group[0].kind
        sizes = costs.of(words)
        if sum(sizes) <= chunk_size:
            parts.append(PartText(kind, title, where, "\n\n".join(b.text for b in group)))
            continue
        for start, end in windows(words, chunk_size, overlap, sizes):
            parts.append(
                PartText(
                    kind, title, f"{where}, words {start + 1}-{end}", " ".join(words[start:end])
                )
            )
    return _with_spans(text, parts) if len(parts) > 1 else []


def _with_spans(text: str, parts: list[PartText]) -> list[PartText]:
    """Each part's position with `chars A-B`, its span in `text` (0-based, end exclusive).

    Parts are rejoined words, so a part is found as its words with any whitespace between
    them, in order (each after the previous part's start and within reach of its end, so a
    part that is not there costs a bounded scan, not the rest of the text); a part not found
    verbatim (an extractor's blocks that are not the stored text) keeps its position without
    a span.
    """
    out, cursor, last = [], 0, 0
    for p in parts:
        words = p.text.split()
        reach = cursor + 2 * (last + len(p.text)) + 1024
        pattern = re.compile(r"\s+".join(map(re.escape, words))) if words else None
        m = pattern.search(text, cursor, reach) if pattern else None
        if m is None:
            out.append(p)
            continue
        cursor, last = m.start() + 1, m.end() - m.start()
        out.append(PartText(p.kind, p.title, f"{p.position}, chars {m.start()}-{m.end()}", p.text))
    return out


_END = re.compile(r"[.!?][\"')\]]*$")


def windows(
    words: list[str], size: int, overlap: int, sizes: list[int] | None = None
) -> list[tuple[int, int]]:
    """(start, end) word offsets of the size windows over `words`.

    Windows of at most `size` tokens (`sizes`: each word's; 1 a word by default, and a window
    holds at least one word), each starting about `overlap` tokens before the previous one
    ended. A window ends after the last sentence that fits in it (when that keeps more than
    half of it) and the next starts at the sentence start nearest to `overlap` tokens back
    (within half of that), so a passage begins and ends mid-sentence only where the text
    gives no sentence end to cut at. A last window shorter than half the size starts earlier,
    at a sentence start where it can, so that no passage is a short scrap.
    """
    n = len(words)
    cum = list(accumulate(sizes if sizes is not None else [1] * n, initial=0))
    starts = [i for i in range(1, n) if _END.search(words[i - 1])]
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = max(bisect_right(cum, cum[start] + size) - 1, start + 1)
        if end < n:
            last = bisect_right(starts, end) - 1  # the last sentence start at or before `end`
            if last >= 0 and cum[starts[last]] - cum[start] > size // 2:
                end = starts[last]
        elif out and cum[n] - cum[start] < size // 2:
            start = _full_tail(cum, starts, size, start, out[-1][0])
        out.append((start, end))
        if end >= n:
            return out
        target = bisect_left(cum, cum[end] - overlap)
        lo = bisect_left(cum, cum[end] - overlap - overlap // 2)
        hi = bisect_right(cum, cum[end] - overlap + overlap // 2) - 1
        near = starts[
            bisect_left(starts, max(lo, start + 1)) : bisect_right(starts, min(hi, end - 1))
        ]
        start = min(near, key=lambda b: abs(b - target)) if near else max(target, start + 1)


def _full_tail(cum: list[int], starts: list[int], size: int, start: int, floor: int) -> int:
    """Where a last window that would be short starts instead: as far back as `size` tokens
    before the end reach, moved on to the next sentence start (never at or before `floor`,
    the previous window's start)."""
    n = len(cum) - 1
    earliest = bisect_left(cum, cum[n] - size)
    k = bisect_left(starts, earliest)
    begin = starts[k] if k < len(starts) and starts[k] < start else earliest
    return min(start, max(begin, floor + 1))


def _group(blocks: list[Block], chunk_size: int, min_size: int, costs: Costs) -> list[list[Block]]:
    """Pages and slides alone; a heading starts a part unless it or the part so far is small;
    paragraphs merge while they fit."""
    groups: list[list[Block]] = []
    size = 0
    for b in blocks:
        n = costs.total(b.text)
        last = groups[-1] if groups else None
        soft_run = last is not None and last[-1].kind not in HARD and b.kind not in HARD
        fits = size + n <= chunk_size and b.kind != "heading"
        if soft_run and (fits or size < min_size or n < min_size):
            last.append(b)  # type: ignore[union-attr]
            size += n
        else:
            groups.append([b])
            size = n
    return groups


def _position(group: list[Block]) -> str:
    first, last = group[0], group[-1]
    noun = {"page": "page", "slide": "slide", "field": "field"}.get(first.kind, "section")
    if first.index == last.index:
        return f"{noun} {first.index}"
    return f"{noun}s {first.index}-{last.index}"


STRUCTURAL = (*HARD, "heading", "table")
_NUMBER = re.compile(r"\d+")


def blocks_from_parts(parts: list[tuple[str, str | None, str, str]]) -> list[Block] | None:
    """The structure an earlier split kept, rebuilt from its parts (kind, title, position, text).

    For documents stored before their structure was recorded: size windows of one page,
    slide or section join back into one block (their overlap removed). None when the parts
    carry no structure (plain paragraphs or size chunks) or no text.
    """
    if not parts or not any(k in STRUCTURAL for k, *_ in parts) or not all(p[3] for p in parts):
        return None
    groups: list[list[tuple[str, str | None, str, str]]] = []
    for part in parts:
        base = part[2].split(", words ")[0]
        if groups and groups[-1][0][2].split(", words ")[0] == base and ", words " in part[2]:
            groups[-1].append(part)
        else:
            groups.append([part])
    blocks = []
    for n, group in enumerate(groups, 1):
        kind, title, position, text = group[0]
        if len(group) > 1:
            words = text.split()
            for _, _, _, more in group[1:]:
                words += _without_overlap(words, more.split())
            text = " ".join(words)
        number = _NUMBER.search(position)
        blocks.append(Block(text, kind, int(number.group()) if number else n, title))
    return blocks


def _without_overlap(before: list[str], window: list[str]) -> list[str]:
    """`window` less the longest prefix that repeats the end of `before`."""
    for k in range(min(len(before), len(window)), 0, -1):
        if before[-k:] == window[:k]:
            return window[k:]
    return window
