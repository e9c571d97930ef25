"""DiffView: DiffRows side by side (two panes scrolling together) or unified (one pane, `u`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from keepui.widgets.keys import SCROLL_KEYS, focus_now
from keepui_engine import DiffRow

# Which line and word styles a row kind gets on each side.
_LINE = {
    ("left", "change"): "removed",
    ("left", "delete"): "removed",
    ("right", "change"): "added",
    ("right", "insert"): "added",
}
CONTEXT = 2
"""Rows shown above a change the view jumps to."""
WORD_MARGIN = 8
"""Cells kept left of the first changed word when the view scrolls sideways to it."""


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


class DiffPane(ScrollView, can_focus=True):
    """A pane of diff lines: line numbers (and signs), text, changed words marked.

    Args:
        lines: What it shows (side by side, both panes get one line per row so rows line up).
    """

    COMPONENT_CLASSES = {
        "diff-pane--gutter",
        "diff-pane--added",
        "diff-pane--removed",
        "diff-pane--added-word",
        "diff-pane--removed-word",
        "diff-pane--filler",
    }
    BINDINGS = SCROLL_KEYS

    def __init__(self, lines: Sequence[Line], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.lines = lines
        self.partner: DiffPane | None = None
        if isinstance(lines, SideLines):
            widest_no, widest = lines.widest()
            sign = 0
        else:
            widest_no = max((line.number or 0 for line in lines), default=0)
            widest = max((len(line.text) for line in lines), default=0)
            sign = 2 if any(line.sign for line in lines) else 0
        self.gutter_width = len(str(widest_no)) + 1 + sign
        self.virtual_size = Size(self.gutter_width + widest + 1, len(lines))

    def render_line(self, y: int) -> Strip:
        """Render one visible line: the gutter stays put, the text scrolls sideways."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        index = scroll_y + y
        base = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        line = self.lines[index]
        gutter_style = base + self.get_component_rich_style("diff-pane--gutter")
        text_width = max(width - self.gutter_width, 0)
        if line.number is None:
            filler = base + self.get_component_rich_style("diff-pane--filler")
            gutter = Strip([Segment(" " * self.gutter_width, gutter_style)])
            return Strip.join([gutter, Strip.blank(text_width, filler)])
        kind = line.kind
        line_style = base + self.get_component_rich_style(f"diff-pane--{kind}") if kind else base
        sign = f"{line.sign} " if line.sign else ""
        number = f"{line.number:>{self.gutter_width - 1 - len(sign)}} {sign}"
        gutter = Strip([Segment(number, gutter_style)])
        text = Strip(self._segments(line, line_style)).crop_extend(
            scroll_x, scroll_x + text_width, line_style
        )
        return Strip.join([gutter, text])

    def _segments(self, line: Line, line_style: Style) -> list[Segment]:
        if not line.spans or line.kind is None:
            return [Segment(line.text, line_style)]
        word = line_style + self.get_component_rich_style(f"diff-pane--{line.kind}-word")
        out: list[Segment] = []
        pos = 0
        for start, end in line.spans:
            if start > pos:
                out.append(Segment(line.text[pos:start], line_style))
            out.append(Segment(line.text[start:end], word))
            pos = end
        if pos < len(line.text):
            out.append(Segment(line.text[pos:], line_style))
        return out

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scroll the partner pane to the same row; tell the view where it is."""
        super().watch_scroll_y(old_value, new_value)
        partner = self.partner
        if partner is not None and round(partner.scroll_y) != round(new_value):
            partner.scroll_to(y=new_value, animate=False)
        self.post_message(DiffView.Scrolled())

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        """Scroll the partner pane sideways too."""
        super().watch_scroll_x(old_value, new_value)
        partner = self.partner
        if partner is not None and round(partner.scroll_x) != round(new_value):
            partner.scroll_to(x=new_value, animate=False)


class DiffView(Vertical):
    """A diff, side by side (default) or unified (`u`); `n`/`p` jump between changes and
    sideways to their first changed word; `position` says `change k of N`.

    Args:
        rows: The diff rows.
    """

    BINDINGS = [
        Binding("n", "next_change", "Next change"),
        Binding("p", "previous_change", "Prev change"),
        Binding("u", "toggle_unified", "Unified / side by side"),
    ]

    class Scrolled(Message):
        """A pane scrolled (the change shown may be another)."""

        def can_replace(self, message: Message) -> bool:
            """A burst of scrolls needs one update."""
            return isinstance(message, DiffView.Scrolled)

    def __init__(self, rows: list[DiffRow], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rows = rows
        self.changes = [i for i, r in enumerate(rows) if r.kind != "equal"]
        self.blocks = [i for i in self.changes if i == 0 or rows[i - 1].kind == "equal"]
        self.unified = False
        self._starts: list[int] = []

    def compose(self) -> ComposeResult:
        """The left (older) and right (newer) panes, each the other's partner."""
        with Horizontal(id="diff-sides"):
            left = DiffPane(side_lines(self.rows, "left"), id="diff-left")
            right = DiffPane(side_lines(self.rows, "right"), id="diff-right")
            left.partner, right.partner = right, left
            yield left
            yield right

    @property
    def pane(self) -> DiffPane:
        """The pane that scrolls (the left one side by side)."""
        return self.query_one("#diff-unified" if self.unified else "#diff-left", DiffPane)

    def _line_of(self, row: int) -> int:
        return self._starts[row] if self.unified else row

    def _row_at(self, line: int) -> int:
        if not self.unified:
            return line
        return max((r for r, start in enumerate(self._starts) if start <= line), default=0)

    @property
    def top(self) -> int:
        """The diff row at the top of the view."""
        return self._row_at(round(self.pane.scroll_y))

    @property
    def position(self) -> str:
        """`change 2 of 5` (the last change that starts at or above the view's top + context)."""
        if not self.blocks:
            return "no changes"
        here = self.top + CONTEXT
        k = sum(1 for b in self.blocks if b <= here)
        return f"change {max(k, 1)} of {len(self.blocks)}"

    def scroll_to_row(self, row: int) -> None:
        """Show a row near the top, with context above it, and its first changed word."""
        pane = self.pane
        pane.scroll_to(y=max(self._line_of(row) - CONTEXT, 0), animate=False)
        pane.scroll_to(x=self._first_word_x(row, pane), animate=False)

    def _first_word_x(self, row: int, pane: DiffPane) -> int:
        """How far to scroll sideways so the block's first changed word is in view."""
        end = next((b for b in self.blocks if b > row), len(self.rows))
        for r in range(row, end):
            line = pane.lines[self._line_of(r)]
            starts = [s for s, _ in line.spans]
            if not starts and self.unified and r < len(self._starts) - 1:
                nxt = pane.lines[self._line_of(r) + 1]
                starts = [s for s, _ in nxt.spans] if nxt.kind == "added" else []
            if starts:
                visible = max(pane.size.width - pane.gutter_width, 1)
                first = min(starts)
                return 0 if first < visible - WORD_MARGIN else first - WORD_MARGIN
        return 0

    def action_next_change(self) -> None:
        """Jump to the next changed block below the top of the view."""
        top = self.top + CONTEXT
        nxt = next((i for i in self.blocks if i > top), None)
        if nxt is not None:
            self.scroll_to_row(nxt)

    def action_previous_change(self) -> None:
        """Jump to the previous changed block above the top of the view."""
        top = self.top + CONTEXT
        prev = [i for i in self.blocks if i < top]
        if prev:
            self.scroll_to_row(prev[-1])

    async def action_toggle_unified(self) -> None:
        """Switch between side by side and unified, keeping the row at the top."""
        row = self.top
        if not self.query("#diff-unified"):
            lines, self._starts = unified_lines(self.rows)
            await self.mount(DiffPane(lines, id="diff-unified"))
        self.unified = not self.unified
        self.query_one("#diff-sides").display = not self.unified
        self.query_one("#diff-unified").display = self.unified
        pane = self.pane
        focus_now(pane)
        self.call_after_refresh(pane.scroll_to, y=self._line_of(row), animate=False)
        self.post_message(self.Scrolled())
