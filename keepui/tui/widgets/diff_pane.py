"""DiffPane: one scrolling pane of diff lines, cut at the edge (scrolls sideways) or wrapped."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rich.segment import Segment
from rich.style import Style
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from keepui.tui.widgets.diff_lines import Line, SideLines, wrap_starts
from keepui.tui.widgets.keys import SCROLL_KEYS

MIN_WRAP = 10
"""Fewest cells a wrapped line's pieces take, however narrow the pane."""


class DiffPane(ScrollView, can_focus=True):
    """A pane of diff lines: line numbers (and signs), text, changed words marked.

    Side by side, the two panes are each other's `partner`: they scroll together, and when
    wrapped, a row takes as many screen lines on both sides as its longer side needs, so rows
    stay level.

    Args:
        lines: What it shows (side by side, both panes get one line per row so rows line up).
    """

    COMPONENT_CLASSES = {
        "diff-pane--gutter",
        "diff-pane--current",
        "diff-pane--added",
        "diff-pane--removed",
        "diff-pane--added-word",
        "diff-pane--removed-word",
        "diff-pane--filler",
    }
    BINDINGS = SCROLL_KEYS

    class Scrolled(Message):
        """The pane scrolled (the change in view may be another)."""

        def can_replace(self, message: Message) -> bool:
            """A burst of scrolls needs one update."""
            return isinstance(message, DiffPane.Scrolled)

    def __init__(self, lines: Sequence[Line], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.lines = lines
        self.partner: DiffPane | None = None
        self.wrap = False
        """Whether long lines wrap (else they are cut at the edge and the pane scrolls sideways)."""
        self.marked = range(0)
        """The lines of the current change (their gutter is marked)."""
        if isinstance(lines, SideLines):
            widest_no, self.widest = lines.widest()
            sign = 0
        else:
            widest_no = max((line.number or 0 for line in lines), default=0)
            self.widest = max((len(line.text) for line in lines), default=0)
            sign = 2 if any(line.sign for line in lines) else 0
        self.gutter_width = len(str(widest_no)) + 1 + sign
        self._starts: list[int] | None = None  # screen line of each line when wrapped (+ end)
        self._pieces: dict[int, list[int]] = {}  # where each wrapped line's pieces start
        self._layout: tuple[bool, int, int] | None = (False, 0, 0)
        self.virtual_size = Size(self.gutter_width + self.widest + 1, len(lines))

    @property
    def text_width(self) -> int:
        """Cells the text gets in view (the pane less its gutter and scrollbar)."""
        return max(self.scrollable_content_region.width - self.gutter_width, 0)

    @property
    def wrap_width(self) -> int:
        """Cells a wrapped piece takes (room kept for the vertical scrollbar, so that it
        showing or not never changes where lines wrap)."""
        width = self.size.width - self.styles.scrollbar_size_vertical - self.gutter_width
        return max(width, MIN_WRAP)

    def _key(self) -> tuple[bool, int, int]:
        if not self.wrap:
            return (False, 0, 0)
        partner = self.partner
        return (True, self.wrap_width, partner.wrap_width if partner is not None else 0)

    def relayout(self) -> None:
        """Fit the lines to the wrapping and the width (both panes side by side); cheap when
        neither changed, and put off while a pane has no size yet (hidden, or not laid out)."""
        panes = [self] if self.partner is None else [self, self.partner]
        if all(pane._layout == pane._key() for pane in panes):
            return
        starts: list[int] | None = None
        top = self.line_at(round(self.scroll_y))[0]
        if self.wrap:
            if not all(pane.size.width for pane in panes):
                return
            heights = [1] * len(self.lines)
            for pane in panes:
                width = pane.wrap_width
                texts = pane.lines.texts() if isinstance(pane.lines, SideLines) else None
                for i in range(len(pane.lines)):
                    text = texts[i] if texts is not None else pane.lines[i].text
                    if len(text) > width:
                        heights[i] = max(heights[i], len(wrap_starts(text, width)))
            starts = [0, *accumulate(heights)]
        for pane in panes:
            pane.wrap = self.wrap
            pane._layout, pane._starts = pane._key(), starts
            pane._pieces.clear()
            if starts is None:
                width = pane.gutter_width + pane.widest + 1
                pane.virtual_size = Size(width, len(pane.lines))
            else:
                pane.virtual_size = Size(pane.gutter_width + pane.wrap_width, starts[-1])
                pane.scroll_to(x=0, animate=False, force=True)
            pane.refresh()
        if self.lines:  # the line at the top stays there (the partner follows)
            self.scroll_to(
                y=self.screen_line(min(top, len(self.lines) - 1)), animate=False, force=True
            )

    def on_resize(self, event: Resize) -> None:
        """Wrapped lines wrap again at the new width."""
        if self.wrap:
            self.relayout()

    def screen_line(self, index: int) -> int:
        """The screen line (scroll position) where a line starts; `len(lines)` gives the end."""
        return index if self._starts is None else self._starts[index]

    def line_at(self, y: int) -> tuple[int, int]:
        """The line at a screen line, and which of its wrapped pieces is there."""
        if self._starts is None:
            return y, 0
        index = min(bisect_right(self._starts, y) - 1, len(self.lines) - 1)
        return max(index, 0), y - self._starts[max(index, 0)]

    def screen_line_of(self, index: int, column: int) -> int:
        """The screen line showing a column of a line (its first when not wrapped)."""
        if self._starts is None:
            return index
        pieces = self._pieces_of(index)
        return self._starts[index] + bisect_right(pieces, column) - 1

    def _pieces_of(self, index: int) -> list[int]:
        pieces = self._pieces.get(index)
        if pieces is None:
            pieces = wrap_starts(self.lines[index].text, self.wrap_width)
            self._pieces[index] = pieces
        return pieces

    def render_line(self, y: int) -> Strip:
        """Render one visible line: the gutter stays put, the text scrolls sideways (or wraps)."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        if scroll_y + y >= self.virtual_size.height:
            return Strip.blank(width, base)
        index, piece = self.line_at(scroll_y + y)
        line = self.lines[index]
        gutter_style = base + self.get_component_rich_style("diff-pane--gutter")
        if index in self.marked:
            gutter_style += self.get_component_rich_style("diff-pane--current")
        text_width = max(width - self.gutter_width, 0)
        if line.number is None:
            filler = base + self.get_component_rich_style("diff-pane--filler")
            gutter = Strip([Segment(" " * self.gutter_width, gutter_style)])
            return Strip.join([gutter, Strip.blank(text_width, filler)])
        kind = line.kind
        line_style = base + self.get_component_rich_style(f"diff-pane--{kind}") if kind else base
        sign = f"{line.sign} " if line.sign else ""
        number = f"{line.number:>{self.gutter_width - 1 - len(sign)}} {sign}"
        if piece:
            number = " " * len(number)
        gutter = Strip([Segment(number, gutter_style)])
        text = Strip(self._segments(line, line_style))
        if self._starts is None:
            text = text.crop_extend(scroll_x, scroll_x + text_width, line_style)
        else:
            pieces = self._pieces_of(index)
            start = pieces[piece] if piece < len(pieces) else len(line.text)
            end = pieces[piece + 1] if piece + 1 < len(pieces) else len(line.text)
            text = text.crop(start, end).extend_cell_length(text_width, line_style)
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
            partner.scroll_to(y=new_value, animate=False, force=True)
        self.post_message(self.Scrolled())

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        """Scroll the partner pane sideways too."""
        super().watch_scroll_x(old_value, new_value)
        partner = self.partner
        if partner is not None and round(partner.scroll_x) != round(new_value):
            partner.scroll_to(x=new_value, animate=False, force=True)
