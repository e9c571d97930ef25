"""DiffView: two line-API panes showing DiffRows side by side, scrolling together."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from keepui.widgets.keys import SCROLL_KEYS
from keepui_engine import DiffRow

# Which line and word styles a row kind gets on each side.
_LINE = {
    ("left", "change"): "removed",
    ("left", "delete"): "removed",
    ("right", "change"): "added",
    ("right", "insert"): "added",
}


class DiffPane(ScrollView, can_focus=True):
    """One side (`left` or `right`) of a diff: line numbers, text, changed words marked.

    Args:
        rows: The diff rows (both panes get the same list, so rows line up).
        side: `left` (the older version) or `right`.
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

    def __init__(self, rows: list[DiffRow], side: str, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rows = rows
        self.side = side
        self.partner: DiffPane | None = None
        numbers = [(r.left_no if side == "left" else r.right_no) or 0 for r in rows]
        self.gutter_width = len(str(max(numbers, default=0))) + 1
        widest = max((len(self._text(r)) for r in rows), default=0)
        self.virtual_size = Size(self.gutter_width + widest + 1, len(rows))

    def _text(self, row: DiffRow) -> str:
        # One cell per tab keeps the word spans' character offsets valid.
        return (row.left if self.side == "left" else row.right).replace("\t", " ")

    def render_line(self, y: int) -> Strip:
        """Render one visible line: the gutter stays put, the text scrolls sideways."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        index = scroll_y + y
        base = self.rich_style
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        number = row.left_no if self.side == "left" else row.right_no
        gutter_style = base + self.get_component_rich_style("diff-pane--gutter")
        text_width = max(width - self.gutter_width, 0)
        if number is None:
            filler = base + self.get_component_rich_style("diff-pane--filler")
            gutter = Strip([Segment(" " * self.gutter_width, gutter_style)])
            return Strip.join([gutter, Strip.blank(text_width, filler)])
        kind = _LINE.get((self.side, row.kind))
        line_style = base + self.get_component_rich_style(f"diff-pane--{kind}") if kind else base
        gutter = Strip([Segment(f"{number:>{self.gutter_width - 1}} ", gutter_style)])
        segments = self._segments(row, line_style, kind)
        text = Strip(segments).crop_extend(scroll_x, scroll_x + text_width, line_style)
        return Strip.join([gutter, text])

    def _segments(self, row: DiffRow, line_style: Style, kind: str | None) -> list[Segment]:
        text = self._text(row)
        spans = row.left_spans if self.side == "left" else row.right_spans
        if row.kind != "change" or not spans or kind is None:
            return [Segment(text, line_style)]
        word = line_style + self.get_component_rich_style(f"diff-pane--{kind}-word")
        out: list[Segment] = []
        pos = 0
        for start, end in spans:
            if start > pos:
                out.append(Segment(text[pos:start], line_style))
            out.append(Segment(text[start:end], word))
            pos = end
        if pos < len(text):
            out.append(Segment(text[pos:], line_style))
        return out

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scroll the partner pane to the same row."""
        super().watch_scroll_y(old_value, new_value)
        partner = self.partner
        if partner is not None and round(partner.scroll_y) != round(new_value):
            partner.scroll_to(y=new_value, animate=False)

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        """Scroll the partner pane sideways too."""
        super().watch_scroll_x(old_value, new_value)
        partner = self.partner
        if partner is not None and round(partner.scroll_x) != round(new_value):
            partner.scroll_to(x=new_value, animate=False)


class DiffView(Horizontal):
    """The two panes of a diff, kept at the same scroll position; n/p jump between changes.

    Args:
        rows: The diff rows.
    """

    BINDINGS = [
        Binding("n", "next_change", "Next change"),
        Binding("p", "previous_change", "Prev change"),
    ]

    def __init__(self, rows: list[DiffRow], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rows = rows
        self.changes = [i for i, r in enumerate(rows) if r.kind != "equal"]

    def compose(self) -> ComposeResult:
        """The left (older) and right (newer) panes, each the other's partner."""
        left = DiffPane(self.rows, "left", id="diff-left")
        right = DiffPane(self.rows, "right", id="diff-right")
        left.partner, right.partner = right, left
        yield left
        yield right

    @property
    def top(self) -> int:
        """The first visible row."""
        return round(self.query_one("#diff-left", DiffPane).scroll_y)

    def scroll_to_row(self, row: int) -> None:
        """Show a row near the top of both panes, with two rows of context above it."""
        self.query_one("#diff-left", DiffPane).scroll_to(y=max(row - 2, 0), animate=False)

    def action_next_change(self) -> None:
        """Jump to the next changed block below the top of the view."""
        top = self.top + 2
        nxt = next((i for i in self._block_starts() if i > top), None)
        if nxt is not None:
            self.scroll_to_row(nxt)

    def action_previous_change(self) -> None:
        """Jump to the previous changed block above the top of the view."""
        top = self.top + 2
        prev = [i for i in self._block_starts() if i < top]
        if prev:
            self.scroll_to_row(prev[-1])

    def _block_starts(self) -> list[int]:
        return [i for i in self.changes if i == 0 or self.rows[i - 1].kind == "equal"]
