"""HistoryList: every search run on the store, newest first; selecting one runs it again."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from keepui.tui.widgets.format import age, one_line
from keepui.tui.widgets.keys import OPTION_KEYS
from keepui.tui.widgets.search_bar import format_search
from keepui_engine import SearchRecord

IDS_WIDTH = 28
QUERY_SHOWN = 84
"""Characters of a past query shown (three lines of the sidebar; the bar gets all of it)."""
MAX_SHOWN = 200
"""Searches kept in the list during a session (the store keeps them all; 100 load at start)."""


AGES_EVERY_S = 30
"""How often the "ago" labels are redrawn."""


def _prompt(record: SearchRecord, runs: int = 1) -> Content:
    q = record.q
    extra = format_search(q)[len(q.query) :].strip()
    lines = Content(one_line(q.query, QUERY_SHOWN))
    if extra:
        lines = lines + Content("\n") + Content.styled(extra, "italic")
    times = f"{runs} runs · " if runs > 1 else ""
    meta = f"\n{times}{len(record.ids)} hits · {age(record.at)} ago · #{record.id}"
    ids = ", ".join(record.ids)
    if ids:
        meta += "\n" + (ids if len(ids) <= IDS_WIDTH else ids[: IDS_WIDTH - 1] + "…")
    return lines + Content.styled(meta, "dim")


def collapse(records: list[SearchRecord]) -> tuple[list[SearchRecord], list[int]]:
    """The newest record of each distinct search (same bar text), newest first, and how many
    times each was run."""
    newest: dict[str, SearchRecord] = {}
    runs: dict[str, int] = {}
    for record in records:
        key = format_search(record.q)
        newest.setdefault(key, record)
        runs[key] = runs.get(key, 0) + 1
    return list(newest.values()), [runs[k] for k in newest]


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
        self.runs: list[SearchRecord] = []
        """Every search shown for, newest first (repeats included)."""
        self.records: list[SearchRecord] = []
        """One per distinct search, newest first: what the options show."""
        self.counts: list[int] = []
        """How many times each of `records` was run."""

    def on_mount(self) -> None:
        """Redraw the "ago" labels as time passes."""
        self.set_interval(AGES_EVERY_S, self.refresh_ages)

    def set_records(self, records: list[SearchRecord]) -> None:
        """Show these searches (newest first; a repeated one once, with its count), keeping
        the highlight where it was."""
        keep = self.highlighted
        self.runs = list(records)
        self.records, self.counts = collapse(self.runs)
        self.clear_options()
        self.add_options(
            Option(_prompt(r, n), id=f"search-{r.id}")
            for r, n in zip(self.records, self.counts, strict=True)
        )
        if self.records:
            self.highlighted = min(keep or 0, len(self.records) - 1)

    def refresh_ages(self) -> None:
        """Redraw each entry (its "5m ago" moves on)."""
        for i, (record, runs) in enumerate(zip(self.records, self.counts, strict=True)):
            self.replace_option_prompt_at_index(i, _prompt(record, runs))

    def add_record(self, record: SearchRecord) -> None:
        """Put a new search at the top (the list is rebuilt, so it is capped at MAX_SHOWN)."""
        self.set_records([record, *self.runs][:MAX_SHOWN])
        self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Turn the selected option into a `Selected` message carrying its record."""
        event.stop()
        if 0 <= event.option_index < len(self.records):
            self.post_message(self.Selected(self.records[event.option_index]))
