"""VersionTimeline: every version of a document (date, size, what changed); pick two to diff."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from keepui.tui.widgets.format import cells, first_line, short_time, size
from keepui.tui.widgets.keys import TABLE_KEYS
from keepui_engine import VersionInfo

COLUMNS = ("", "@V", "v", "written", "size", "change", "summary")
MARK = "●"


class VersionTimeline(DataTable[Text]):
    """Newest version first. Space marks a version; `d` diffs the mark (or the one before) with
    the version under the cursor."""

    BINDINGS = [
        *TABLE_KEYS,
        Binding("space", "mark", "Mark"),
        Binding("d", "diff", "Diff"),
    ]

    @dataclass
    class Picked(Message):
        """Two versions to compare, older on the left."""

        left: VersionInfo
        """The older version."""
        right: VersionInfo
        """The newer version."""

    @dataclass
    class Highlighted(Message):
        """The cursor moved to a version."""

        version: VersionInfo
        """The version under the cursor."""
        again: bool = False
        """`g`/`G` on the row already under the cursor: show that version (not a part)."""

    @dataclass
    class Unpaired(Message):
        """`d` was pressed where no pair can be made (a single version)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type="row")
        self.versions: list[VersionInfo] = []
        self.marked: int | None = None

    def on_mount(self) -> None:
        """Add the columns."""
        self.add_columns(*COLUMNS)

    def set_versions(self, versions: list[VersionInfo], row: int | None = None) -> None:
        """Show a timeline (newest first); the mark survives when its version still exists.

        Args:
            versions: The versions, newest first.
            row: Where the cursor goes. None: on the current version when it was there (a
                new version, a tag edit, is what to see), else on the same version as before.
        """
        if row is None:
            here = self.current
            numbers = [v.version for v in versions]
            keep = here is not None and self.cursor_row > 0 and here.version in numbers
            row = numbers.index(here.version) if keep and here is not None else 0
        self.versions = list(versions)
        if self.marked is not None and self.marked not in {v.version for v in versions}:
            self.marked = None
        self.clear()
        for v in self.versions:
            self.add_row(*cells(self._cells(v)), key=str(v.version))
        if self.versions:
            self.move_cursor(row=min(row, len(self.versions) - 1))

    def _cells(self, v: VersionInfo) -> tuple[str, ...]:
        return (
            MARK if v.version == self.marked else "",
            str(v.offset),
            str(v.version),
            short_time(v.updated),
            size(v.size),
            v.change,
            first_line(v.summary, 50),
        )

    @property
    def current(self) -> VersionInfo | None:
        """The version under the cursor."""
        if not self.versions or not 0 <= self.cursor_row < len(self.versions):
            return None
        return self.versions[self.cursor_row]

    def action_mark(self) -> None:
        """Mark the version under the cursor (or unmark it); one mark at a time."""
        cur = self.current
        if cur is None:
            return
        self.marked = None if self.marked == cur.version else cur.version
        self.set_versions(self.versions)

    def action_diff(self) -> None:
        """Pick the marked version (or the one before the cursor's) and the cursor's."""
        cur = self.current
        if cur is None:
            return
        other: VersionInfo | None = None
        if self.marked is not None and self.marked != cur.version:
            other = next(v for v in self.versions if v.version == self.marked)
        elif self.cursor_row + 1 < len(self.versions):
            other = self.versions[self.cursor_row + 1]
        elif self.cursor_row > 0:
            other = self.versions[self.cursor_row - 1]
        if other is None:
            self.post_message(self.Unpaired())
            return
        left, right = sorted((other, cur), key=lambda v: v.version)
        self.post_message(self.Picked(left, right))

    def action_scroll_top(self) -> None:
        """`g`: the newest version (shown whole, even when it is already under the cursor)."""
        self._go(0)

    def action_scroll_bottom(self) -> None:
        """`G`: the oldest version (shown whole, even when it is already under the cursor)."""
        self._go(self.row_count - 1)

    def _go(self, row: int) -> None:
        if row < 0:
            return
        if self.cursor_row == row and self.current is not None:
            self.post_message(self.Highlighted(self.current, again=True))
        else:
            self.move_cursor(row=row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the version under the cursor."""
        event.stop()
        if self.current is not None:
            self.post_message(self.Highlighted(self.current))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter diffs, like `d`."""
        event.stop()
        self.action_diff()
