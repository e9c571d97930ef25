"""ResultPane: one search's hits: a readable title and the id, then fixed-width scores."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from keepui.widgets.hit_row import RANK, RowLayout, hit_cells, row_layout, title_cells
from keepui.widgets.keys import TABLE_KEYS
from keepui_engine import FindQuery, FindResult, Hit, SearchRecord

DEFAULT_WIDTH = 80
"""The table's width until it is laid out."""


class ResultPane(DataTable[Text]):
    """The hits of one search; posts `HitHighlighted` as the cursor moves and `HitChosen` on Enter.

    Each row leads with the document's readable title (its `title` tag, file name, or first
    words) with its id dimmed after it; the score columns have fixed widths and always fit
    (narrow tables keep only the score and the age).

    Args:
        q: What the search asked for.
        result: What it found.
        record: Its search-history entry, when it was recorded.
        width: The width the table will have (the tab area's), so the first paint is right.
    """

    BINDINGS = [*TABLE_KEYS, Binding("enter", "select_cursor", "Open")]

    @dataclass
    class HitChosen(Message):
        """The user opened a hit (Enter)."""

        hit: Hit
        """The hit."""
        query: str = ""
        """The words searched for (the document marks them)."""

    @dataclass
    class HitHighlighted(Message):
        """The cursor moved to another hit (None when the pane is empty)."""

        pane: ResultPane
        """The pane whose cursor moved."""
        hit: Hit | None
        """The hit under the cursor."""

    def __init__(
        self,
        q: FindQuery,
        result: FindResult,
        record: SearchRecord | None = None,
        *,
        width: int = DEFAULT_WIDTH,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.q = q
        self.result = result
        self.record = record
        self.stale = False
        """The store changed since these hits were found (refreshed when next shown)."""
        self.tab_name: str | None = None
        """The name the user gave the tab (None: its query)."""
        self.rows_layout = row_layout(width)
        """The columns shown and the title's width (from the table's width)."""

    def on_mount(self) -> None:
        """Add the columns and the hits."""
        self._add_columns()
        self.show(self.result)

    def _add_columns(self) -> None:
        layout = self.rows_layout
        self.add_column(RANK.key, width=RANK.width, key=RANK.key)
        self.add_column("title · id", width=layout.title_width, key="title")
        for column in layout.columns:
            label = Text(column.key, justify="right")
            self.add_column(label, width=column.width, key=column.key)

    def on_resize(self, event: events.Resize) -> None:
        """Lay the columns out again when the width calls for another layout."""
        layout = row_layout(event.size.width)
        if layout != self.rows_layout:
            self.rows_layout = layout
            row = self.cursor_row
            self.clear(columns=True)
            self._add_columns()
            self._add_rows()
            if self.row_count:
                self.move_cursor(row=min(row, self.row_count - 1))

    @property
    def hits(self) -> list[Hit]:
        """The hits shown, best first."""
        return self.result.hits

    @property
    def ids(self) -> list[str]:
        """Their ids, best first."""
        return [h.id for h in self.result.hits]

    @property
    def current_hit(self) -> Hit | None:
        """The hit under the cursor."""
        if not self.hits or not 0 <= self.cursor_row < len(self.hits):
            return None
        return self.hits[self.cursor_row]

    def show(self, result: FindResult) -> None:
        """Replace the hits, keeping the cursor on the same id when it is still there."""
        keep = self.current_hit.id if self.is_mounted and self.current_hit else None
        self.result = result
        self.clear()
        self._add_rows()
        ids = self.ids
        if keep in ids:
            self.move_cursor(row=ids.index(keep))
        self.post_message(self.HitHighlighted(self, self.current_hit))

    def _add_rows(self) -> None:
        layout: RowLayout = self.rows_layout
        titles = title_cells(self.hits, layout.title_width)
        for rank, (hit, title) in enumerate(zip(self.hits, titles, strict=True), 1):
            self.add_row(*hit_cells(rank, hit, layout, title), key=hit.id)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the hit under the cursor."""
        event.stop()
        self.post_message(self.HitHighlighted(self, self.current_hit))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Report the chosen hit."""
        event.stop()
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.HitChosen(hit, self.q.query))
