"""DiffView: DiffRows side by side (two panes scrolling together) or unified (one pane, `u`),
with a change cursor (`n`/`p`) and wrapping (`w`)."""

from __future__ import annotations

from bisect import bisect_right

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message

from keepui.tui.widgets.diff_lines import Line, SideLines, side_lines, unified_lines, wrap_starts
from keepui.tui.widgets.diff_pane import DiffPane
from keepui.tui.widgets.keys import focus_now
from keepui_engine import DiffRow

__all__ = [
    "CONTEXT",
    "WORD_MARGIN",
    "DiffPane",
    "DiffView",
    "Line",
    "SideLines",
    "side_lines",
    "unified_lines",
    "wrap_starts",
]

CONTEXT = 2
"""Rows shown above a change the view jumps to."""
WORD_MARGIN = 8
"""Cells kept left of the first changed word when the view scrolls sideways to it."""


class DiffView(Vertical):
    """A diff, side by side (default) or unified (`u`), cut at the edge or wrapped (`w`).

    `n`/`p` move a cursor from change to change (every one, even those on the last screen,
    which the view cannot bring to its top) and scroll to it, sideways too when its first
    changed word is past the edge; `position` says `change k of N`. Scrolled away from the
    cursor's change, the view counts from what is at its top instead.

    Args:
        rows: The diff rows.
    """

    BINDINGS = [
        Binding("n", "next_change", "Next change"),
        Binding("p", "previous_change", "Prev change"),
        Binding("u", "toggle_unified", "Unified"),
        Binding("w", "toggle_wrap", "Wrap"),
    ]

    class Moved(Message):
        """The cursor, the layout or the wrapping changed (what to say may be another)."""

    def __init__(self, rows: list[DiffRow], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rows = rows
        changes = [i for i, r in enumerate(rows) if r.kind != "equal"]
        self.blocks = [i for i in changes if i == 0 or rows[i - 1].kind == "equal"]
        """The first row of each change (a run of rows that differ)."""
        self.unified = False
        self.wrap = False
        self.current: int | None = None
        """The change the cursor is on (an index into `blocks`), None before `n` or `p`."""
        self._starts: list[int] = []
        self._moves = 0  # bumped by each move: a layout change's deferred scroll then stands down

    def compose(self) -> ComposeResult:
        """The left (older) and right (newer) panes, each the other's partner."""
        with Horizontal(id="diff-sides"):
            left = DiffPane(side_lines(self.rows, "left"), id="diff-left")
            right = DiffPane(side_lines(self.rows, "right"), id="diff-right")
            left.partner, right.partner = right, left
            # one sideways extent, so that the pane that scrolls reaches the other's longer line
            left.widest = right.widest = max(left.widest, right.widest)
            for pane in (left, right):
                pane.virtual_size = pane.virtual_size.with_width(
                    pane.gutter_width + pane.widest + 1
                )
            yield left
            yield right

    @property
    def pane(self) -> DiffPane:
        """The pane that scrolls (the left one side by side)."""
        return self.query_one("#diff-unified" if self.unified else "#diff-left", DiffPane)

    def _line_of(self, row: int) -> int:
        """The pane line where a row starts (`len(rows)`: the end)."""
        if not self.unified:
            return row
        return self._starts[row] if row < len(self._starts) else len(self.pane.lines)

    def _row_at(self, line: int) -> int:
        return bisect_right(self._starts, line) - 1 if self.unified and self._starts else line

    def _block_rows(self, k: int) -> range:
        start = self.blocks[k]
        end = next((i for i in range(start, len(self.rows)) if self.rows[i].kind == "equal"), None)
        return range(start, len(self.rows) if end is None else end)

    @property
    def top(self) -> int:
        """The diff row at the top of the view."""
        pane = self.pane
        return max(self._row_at(pane.line_at(round(pane.scroll_y))[0]), 0)

    def _in_view(self, k: int) -> bool:
        """Whether some line of change `k` is on screen."""
        pane, rows = self.pane, self._block_rows(k)
        first = pane.screen_line(self._line_of(rows.start))
        end = pane.screen_line(self._line_of(rows.stop))
        top = round(pane.scroll_y)
        return first < top + pane.scrollable_content_region.height and end > top

    @property
    def index(self) -> int:
        """The change the view is at: the cursor's while it is in view, else the last one that
        starts at or above the view's top + context (-1: above the first)."""
        if self.current is not None and self._in_view(self.current):
            return self.current
        return bisect_right(self.blocks, self.top + CONTEXT) - 1

    @property
    def position(self) -> str:
        """`change 2 of 5` (before the first change: `change 1 of 5`)."""
        if not self.blocks:
            return "no changes"
        return f"change {max(self.index, 0) + 1} of {len(self.blocks)}"

    def go_to_change(self, k: int) -> None:
        """Put the cursor on change `k`, scroll to it and mark it."""
        self._moves += 1
        self.current = k
        self.scroll_to_row(self.blocks[k])
        self._mark()
        self.post_message(self.Moved())

    def _mark(self) -> None:
        rows = self._block_rows(self.current) if self.current is not None else range(0)
        for pane in self.query(DiffPane):
            unified = pane.id == "diff-unified"
            if unified and self._starts and rows:
                end = self._starts[rows.stop] if rows.stop < len(self._starts) else len(pane.lines)
                pane.marked = range(self._starts[rows.start], end)
            else:
                pane.marked = range(0) if unified else rows
            pane.refresh()

    def scroll_to_row(self, row: int) -> None:
        """Show a row near the top, with context above it, and its first changed word."""
        pane = self.pane
        line = self._line_of(row)
        y = max(pane.screen_line(line) - CONTEXT, 0)
        first, side = self._first_word(row)
        x = 0
        if pane.wrap:
            if self.unified:  # an edited line's new text is the line under its old one
                below = side == "right" and self.rows[row].kind == "change"
                word_line = pane.screen_line_of(line + below, first)
            else:
                panes = {"left": pane, "right": pane.partner or pane}
                word_line = panes[side].screen_line_of(line, first)
            height = pane.scrollable_content_region.height
            if word_line >= y + height:  # a long line wrapped past the bottom
                y = word_line - height // 2
        elif first >= pane.text_width - WORD_MARGIN:
            x = first - WORD_MARGIN
        pane.scroll_to(x=x, y=y, animate=False, force=True)

    def _first_word(self, row: int) -> tuple[int, str]:
        """Where a change's first changed word starts, and on which side (a line added or
        removed whole starts at 0)."""
        diff_row = self.rows[row]
        starts = [(s, "left") for s, _ in diff_row.left_spans]
        starts += [(s, "right") for s, _ in diff_row.right_spans]
        return min(starts, default=(0, "left" if diff_row.kind == "delete" else "right"))

    def _anchor(self) -> tuple[int, bool]:
        """The row to keep in view across a change of layout: the cursor's change when in view
        (True), else the top row."""
        k = self.current
        if k is not None and self._in_view(k):
            return self.blocks[k], True
        return self.top, False

    def _restore(self, row: int, change: bool, moves: int) -> None:
        if moves != self._moves:  # the cursor moved since: it decides where the view is
            return
        pane = self.pane
        pane.relayout()
        if change:
            self.scroll_to_row(row)
        else:
            pane.scroll_to(y=pane.screen_line(self._line_of(row)), animate=False, force=True)
        self.post_message(self.Moved())

    def action_next_change(self) -> None:
        """Move the cursor to the next change (from the one in view)."""
        k = self.index + 1
        if k < len(self.blocks):
            self.go_to_change(k)
        elif self.blocks:
            self.go_to_change(len(self.blocks) - 1)

    def action_previous_change(self) -> None:
        """Move the cursor to the previous change (from the one in view)."""
        k = self.index - 1
        if k >= 0:
            self.go_to_change(k)
        elif self.blocks and self.index == 0:
            self.go_to_change(0)

    async def action_toggle_unified(self) -> None:
        """Switch between side by side and unified, keeping the change (or the top row)."""
        row, change = self._anchor()
        if not self.query("#diff-unified"):
            lines, self._starts = unified_lines(self.rows)
            await self.mount(DiffPane(lines, id="diff-unified"))
        self.unified = not self.unified
        self.query_one("#diff-sides").display = not self.unified
        self.query_one("#diff-unified").display = self.unified
        pane = self.pane
        pane.wrap = self.wrap
        if pane.partner is not None:
            pane.partner.wrap = self.wrap
        self._mark()
        focus_now(pane)
        self.call_after_refresh(self._restore, row, change, self._moves)
        self.post_message(self.Moved())

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or cut them at the edge (and scroll sideways); keeps the change
        (or the top row) in view."""
        row, change = self._anchor()
        self.wrap = not self.wrap
        for pane in self.query(DiffPane):
            pane.wrap = self.wrap
        self._restore(row, change, self._moves)
        # once laid out again (the sideways scrollbar comes or goes), the scroll's limits move
        self.call_after_refresh(self._restore, row, change, self._moves)
