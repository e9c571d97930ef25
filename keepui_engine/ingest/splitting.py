"""Split a long document into parts: by structure first, then by size with overlap.

Pages, slides and fields (a caller's own parts, e.g. each indexed field of a LangGraph value)
are hard boundaries (one part each, split further only when too long);
headings and paragraphs are soft: consecutive small ones merge up to the chunk size, as in
the OpenJarvis chunking pipeline. Sizes count whitespace tokens.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

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
) -> list[PartText]:
    """The parts of a document, or [] when it is short and has no pages or slides.

    Args:
        text: The whole text.
        blocks: Its structure (from the extractor); None derives it from the text.
        chunk_size: Most whitespace tokens in a part.
        overlap: Tokens repeated between consecutive size-split windows.
        min_size: Soft blocks smaller than this merge with their neighbours.

    Returns:
        Parts in document order; fewer than two parts means the document is not split.
    """
    if chunk_size < 1 or not 0 <= overlap < chunk_size:
        raise ValueError("chunk_size must be >= 1 and 0 <= overlap < chunk_size")
    blocks = [b for b in (blocks if blocks is not None else blocks_of_text(text)) if b.text.strip()]
    has_hard = any(b.kind in HARD for b in blocks)
    if not has_hard and len(text.split()) <= chunk_size:
        return []
    groups = _group(blocks, chunk_size, min_size)
    parts: list[PartText] = []
    for group in groups:
        words = " ".join(b.text for b in group).split()
        where = _position(group)
        title = next((b.title for b in group if b.title), None)
        kind = group[0].kind
        if len(words) <= chunk_size:
            parts.append(PartText(kind, title, where, "\n\n".join(b.text for b in group)))
            continue
        for start, end in windows(words, chunk_size, overlap):
            parts.append(
                PartText(
                    kind, title, f"{where}, words {start + 1}-{end}", " ".join(words[start:end])
                )
            )
    return parts if len(parts) > 1 else []


_END = re.compile(r"[.!?][\"')\]]*$")


def windows(words: list[str], size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) word offsets of the size windows over `words`.

    Windows of at most `size` words, each starting about `overlap` words before the previous
    one ended. A window ends after the last sentence that fits in it (when that keeps more
    than half of it) and the next starts at the sentence start nearest to `overlap` words
    back (within half of that), so a passage begins and ends mid-sentence only where the text
    gives no sentence end to cut at.
    """
    n = len(words)
    starts = [i for i in range(1, n) if _END.search(words[i - 1])]
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n)
        if end < n:
            last = bisect_right(starts, end) - 1  # the last sentence start at or before `end`
            if last >= 0 and starts[last] > start + size // 2:
                end = starts[last]
        out.append((start, end))
        if end >= n:
            return out
        target = end - overlap
        lo = bisect_left(starts, max(target - overlap // 2, start + 1))
        hi = bisect_right(starts, min(target + overlap // 2, end - 1))
        near = starts[lo:hi]
        start = min(near, key=lambda b: abs(b - target)) if near else max(target, start + 1)


def _group(blocks: list[Block], chunk_size: int, min_size: int) -> list[list[Block]]:
    """Pages and slides alone; a heading starts a part unless it or the part so far is small;
    paragraphs merge while they fit."""
    groups: list[list[Block]] = []
    size = 0
    for b in blocks:
        n = len(b.text.split())
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
