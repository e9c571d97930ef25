"""ResultPane: one search's hits: a readable title and the id, then fixed-width scores."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from keepui.tui.widgets.facet_filter import Selection, keep_hits
from keepui.tui.widgets.hit_row import RANK, RowLayout, hit_cells, row_layout, title_cells
from keepui.tui.widgets.judged_line import JudgedLine
from keepui.tui.widgets.keys import TABLE_KEYS
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
        facets: Tag values the hits must carry (the facet browser's choice).
        listing: The hits are documents listed by their tags, not searched.
        mark_unjudged: Lead unjudged rows with `? ` (the experiments' side by side).
    """

    BINDINGS = [
        *TABLE_KEYS,
        Binding("enter", "select_cursor", "Open"),
        Binding(
            "plus",
            "judge(1)",
            "Judge",
            key_display="+/-",
            tooltip="Judge: mark the hit relevant to this query (+ again: grade 2, 3)",
        ),
        Binding("minus", "judge(0)", "Not relevant", show=False, tooltip="Judge: not relevant"),
        Binding("0", "judge(-1)", "Forget judgment", show=False),
        Binding("backspace", "judge(-1)", "Forget judgment", show=False),
    ]

    @dataclass
    class HitChosen(Message):
        """The user opened a hit (Enter)."""

        hit: Hit
        """The hit."""
        query: str = ""
        """The words searched for (the document marks them)."""

    @dataclass
    class JudgeAsked(Message):
        """The user judged the hit under the cursor for the tab's query (`+`, `-`, `0`)."""

        pane: ResultPane
        """The pane it was judged in."""
        hit: Hit
        """The hit judged."""
        grade: int | None
        """0 not relevant .. 3; None forgets the judgment."""

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
        facets: Selection | None = None,
        listing: bool = False,
        mark_unjudged: bool = False,
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
        self.facets = facets
        """Tag values the hits must carry (the facet browser's choice), or None."""
        self.listing = listing
        """The hits are documents listed by their tags, not searched (no query, no scores)."""
        self._titles: dict[str, Text] = {}  # the title cell each row shows
        self.grades: dict[str, int] = {}
        """The query's relevance judgments: document id -> grade 0..3."""
        self.mark_unjudged = mark_unjudged
        """Unjudged rows lead with `? ` (where judging them is the point)."""

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
        self.result = keep_hits(result, self.facets)
        self.clear()
        self._add_rows()
        ids = self.ids
        if keep in ids:
            self.move_cursor(row=ids.index(keep))
        self.post_message(self.HitHighlighted(self, self.current_hit))

    def _add_rows(self) -> None:
        layout: RowLayout = self.rows_layout
        titles = title_cells(
            self.hits, layout.title_width, self.grades, unjudged=self.mark_unjudged
        )
        self._titles = dict(zip(self.ids, titles, strict=True))
        scored = not self.listing
        for rank, (hit, title) in enumerate(zip(self.hits, titles, strict=True), 1):
            self.add_row(*hit_cells(rank, hit, layout, title, scored=scored), key=hit.id)

    def set_judgments(self, grades: dict[str, int], score: dict[str, object] | None) -> None:
        """Mark the judged rows and show `judged 7/20 · nDCG@10 0.81` under the table."""
        self.grades = dict(grades)
        self._mark_rows()
        parent = self.parent
        lines = parent.query(JudgedLine) if parent is not None else None
        if lines:
            lines.first().show_score(score if grades else None)

    def _mark_rows(self) -> None:
        """Repaint the title cells a judgment changed (a mark can shorten the shared ids, so
        every title is worked out again, but only the changed cells are redrawn)."""
        titles = title_cells(
            self.hits, self.rows_layout.title_width, self.grades, unjudged=self.mark_unjudged
        )
        for hit, title in zip(self.hits, titles, strict=True):
            old = self._titles.get(hit.id)
            if old is None or old.markup != title.markup:
                self._titles[hit.id] = title
                self.update_cell(hit.id, "title", title)

    def action_judge(self, grade: int) -> None:
        """`+`: relevant (again: one grade up, to 3); `-`: not relevant; `0`: forget it."""
        hit = self.current_hit
        if hit is None:
            return
        if self.listing:
            self.notify("Judgments belong to a query: search, then judge its hits.")
            return
        known = self.grades.get(hit.id)
        asked: int | None = None if grade < 0 else grade
        if grade == 1 and known is not None and known >= 1:
            asked = min(known + 1, 3)
        if asked is None and known is None:
            return
        self.post_message(self.JudgeAsked(self, hit, asked))
        # shown at once (and a second `+` counts from it); the stored judgments confirm it
        if asked is None:
            self.grades.pop(hit.id, None)
        else:
            self.grades[hit.id] = asked
        self._mark_rows()

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
