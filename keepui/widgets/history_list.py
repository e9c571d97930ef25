"""HistoryList: every search run on the store, newest first; selecting one runs it again."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from keepui.widgets.format import age, one_line
from keepui.widgets.keys import OPTION_KEYS
from keepui.widgets.search_bar import format_search
from keepui_engine import SearchRecord

IDS_WIDTH = 28
QUERY_SHOWN = 84
"""Characters of a past query shown (three lines of the sidebar; the bar gets all of it)."""
MAX_SHOWN = 200
"""Searches kept in the list during a session (the store keeps them all; 100 load at start)."""


def _prompt(record: SearchRecord) -> Content:
    q = record.q
    extra = format_search(q)[len(q.query) :].strip()
    lines = Content(one_line(q.query, QUERY_SHOWN))
    if extra:
        lines = lines + Content("\n") + Content.styled(extra, "italic")
    meta = f"\n{len(record.ids)} hits · {age(record.at)} ago · #{record.id}"
    ids = ", ".join(record.ids)
    if ids:
        meta += "\n" + (ids if len(ids) <= IDS_WIDTH else ids[: IDS_WIDTH - 1] + "…")
    return lines + Content.styled(meta, "dim")


class HistoryList(OptionList):
    """The search history; Enter on an entry posts `HistoryList.Selected`."""

    BINDINGS = OPTION_KEYS

    @dataclass
    class Selected(Message):
        """The user picked a past search to run again."""

        record: SearchRecord
        """The search as it was recorded."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.records: list[SearchRecord] = []

    def set_records(self, records: list[SearchRecord]) -> None:
        """Show these searches (newest first), keeping the highlight where it was."""
        keep = self.highlighted
        self.records = list(records)
        self.clear_options()
        self.add_options(Option(_prompt(r), id=f"search-{r.id}") for r in self.records)
        if self.records:
            self.highlighted = min(keep or 0, len(self.records) - 1)

    def add_record(self, record: SearchRecord) -> None:
        """Put a new search at the top (the list is rebuilt, so it is capped at MAX_SHOWN)."""
        self.set_records([record, *self.records][:MAX_SHOWN])
        self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Turn the selected option into a `Selected` message carrying its record."""
        event.stop()
        if 0 <= event.option_index < len(self.records):
            self.post_message(self.Selected(self.records[event.option_index]))
