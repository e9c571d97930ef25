"""The lines a diff pane shows: one side of the rows, the unified diff, and where lines wrap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from keepui_engine import DiffRow

# Which line and word styles a row kind gets on each side.
_LINE = {
    ("left", "change"): "removed",
    ("left", "delete"): "removed",
    ("right", "change"): "added",
    ("right", "insert"): "added",
}


@dataclass(frozen=True)
class Line:
    """One line of a diff pane: its number, text, changed-word spans and style (or a filler)."""

    number: int | None
    """The line number in its version (None: a filler row on this side)."""
    text: str
    """The text, tabs as one space each (so the spans' offsets hold)."""
    spans: list[list[int]]
    """Changed words, `[start, end)`."""
    kind: str | None
    """`added`, `removed` or None (unchanged)."""
    sign: str = ""
    """`+`, `−` or a space in the unified view; empty side by side."""


class SideLines(Sequence[Line]):
    """One side (`left` or `right`) of a side-by-side diff, one line per row, made as drawn
    (a 5,000-row diff makes no 10,000 objects up front).

    Args:
        rows: The diff rows.
        side: `left` (the older version) or `right`.
    """

    def __init__(self, rows: list[DiffRow], side: str) -> None:
        self.rows = rows
        self.left = side == "left"
        self.side = side

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Line: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Line]: ...

    def __getitem__(self, index: int | slice) -> Line | Sequence[Line]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = self.rows[index]
        number = row.left_no if self.left else row.right_no
        text = (row.left if self.left else row.right).replace("\t", " ")
        spans = (row.left_spans if self.left else row.right_spans) if row.kind == "change" else []
        return Line(number, text, spans, _LINE.get((self.side, row.kind)))

    def widest(self) -> tuple[int, int]:
        """(largest line number, longest text) of this side."""
        numbers = (r.left_no if self.left else r.right_no for r in self.rows)
        texts = (r.left if self.left else r.right for r in self.rows)
        return max((n or 0 for n in numbers), default=0), max(map(len, texts), default=0)

    def texts(self) -> list[str]:
        """The text of every line, in order (no Line objects made)."""
        return [r.left if self.left else r.right for r in self.rows]


def side_lines(rows: list[DiffRow], side: str) -> SideLines:
    """The lines of one side (`left` or `right`) of a side-by-side diff, one per row."""
    return SideLines(rows, side)


def unified_lines(rows: list[DiffRow]) -> tuple[list[Line], list[int]]:
    """The unified diff (an edited line is its old line then its new one), and where each row
    starts in it."""
    out: list[Line] = []
    starts: list[int] = []
    for row in rows:
        starts.append(len(out))
        left, right = row.left.replace("\t", " "), row.right.replace("\t", " ")
        if row.kind == "equal":
            out.append(Line(row.right_no, right, [], None, " "))
            continue
        if row.kind in ("change", "delete"):
            out.append(Line(row.left_no, left, row.left_spans, "removed", "−"))
        if row.kind in ("change", "insert"):
            out.append(Line(row.right_no, right, row.right_spans, "added", "+"))
    return out, starts


def wrap_starts(text: str, width: int) -> list[int]:
    """Where each piece of a wrapped line starts: after the last space that fits, else at the
    width (a word longer than the width is cut).

    Args:
        text: The line.
        width: Cells a piece may take (below 1: the line stays whole).

    Returns:
        Offsets into `text`, the first 0.
    """
    starts = [0]
    if width < 1:
        return starts
    start = 0
    while len(text) - start > width:
        space = text.rfind(" ", start + 1, start + width)
        start = space + 1 if space > start else start + width
        starts.append(start)
    return starts
