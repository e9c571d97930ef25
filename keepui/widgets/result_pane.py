"""ResultPane: one search's hits as a table (id, score and its parts, age, first summary line)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from keepui.widgets.format import age, cells, first_line, num
from keepui.widgets.keys import TABLE_KEYS
from keepui_engine import FindQuery, FindResult, Hit, SearchRecord

COLUMNS = ("#", "id", "score", "sim", "bm25", "decay", "age", "summary")


def hit_row(rank: int, hit: Hit) -> tuple[str, ...]:
    """The cells of one hit: rank, id, final score, dense, BM25, decay, age, summary."""
    sc = hit.scores or {}
    dense = sc.get("dense", hit.similarity)
    where = hit.id if hit.version == 0 else f"{hit.id}@V{{{hit.version}}}"
    dup = f" +{len(hit.duplicates)}" if hit.duplicates else ""
    return (
        str(rank),
        where + dup,
        num(hit.score),
        num(dense),
        num(sc.get("bm25"), 2),
        num(sc.get("decay", hit.decay), 2),
        age(hit.updated),
        first_line(hit.summary, 60),
    )


class ResultPane(DataTable[Text]):
    """The hits of one search; posts `HitHighlighted` as the cursor moves and `HitChosen` on Enter.

    Args:
        q: What the search asked for.
        result: What it found.
        record: Its search-history entry, when it was recorded.
    """

    BINDINGS = TABLE_KEYS

    @dataclass
    class HitChosen(Message):
        """The user opened a hit (Enter)."""

        hit: Hit
        """The hit."""

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
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.q = q
        self.result = result
        self.record = record

    def on_mount(self) -> None:
        """Add the columns and the hits."""
        self.add_columns(*COLUMNS)
        self.show(self.result)

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
        for rank, hit in enumerate(result.hits, 1):
            self.add_row(*cells(hit_row(rank, hit)), key=hit.id)
        ids = self.ids
        if keep in ids:
            self.move_cursor(row=ids.index(keep))
        self.post_message(self.HitHighlighted(self, self.current_hit))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the hit under the cursor."""
        event.stop()
        self.post_message(self.HitHighlighted(self, self.current_hit))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Report the chosen hit."""
        event.stop()
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.HitChosen(hit))
