"""QueueStatus: the background queue's pending / running / failed / dead counts, kept live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

STATES = ("queued", "running", "failed", "dead")
"""The states counted, in the order shown (superseded work is not counted)."""
WORDS = {"queued": "pending", "running": "running", "failed": "failed", "dead": "dead"}


def queue_totals(report: dict[str, Any] | None) -> dict[str, int]:
    """Tasks per state over every task kind: `{"queued": 2, "running": 1, ...}`."""
    totals = dict.fromkeys(STATES, 0)
    for states in (report or {}).get("counts", {}).values():
        for state, n in states.items():
            if state in totals:
                totals[state] += int(n)
    return totals


def queue_text(report: dict[str, Any] | None) -> str:
    """`queue: 2 pending · 1 running · 1 dead`, `queue empty`, or `queue …` before the poll."""
    if report is None:
        return "queue …"
    totals = queue_totals(report)
    parts = [f"{n} {WORDS[state]}" for state, n in totals.items() if n]
    return "queue: " + " · ".join(parts) if parts else "queue empty"


class QueueStatus(Static):
    """A compact queue line for the status row; follows the app's `queue` report.

    A click posts `QueueStatus.Selected` (the app opens the queue dialog); `p` does the same.
    The classes `-busy` (work pending or running) and `-failed` (failures or dead letters)
    let the theme colour it.
    """

    @dataclass
    class Selected(Message):
        """The user clicked the queue line: show the queue."""

    report: reactive[dict[str, Any] | None] = reactive(None, layout=True)
    """The latest `Workbench.pending()` report (None until the first poll). The width follows
    the text (`width: auto`), so a new report lays the status row out again."""

    def on_mount(self) -> None:
        """Follow the app's queue report."""
        self.tooltip = "Background queue: click or press p for failures, retry and purge."
        self.watch(self.app, "queue", self._set_report)

    def _set_report(self, report: dict[str, Any] | None) -> None:
        self.report = report

    def watch_report(self, report: dict[str, Any] | None) -> None:
        """Colour by state: busy while work waits or runs, failed while failures remain."""
        totals = queue_totals(report)
        self.set_class(bool(totals["queued"] or totals["running"]), "-busy")
        self.set_class(bool(totals["failed"] or totals["dead"]), "-failed")

    @property
    def totals(self) -> dict[str, int]:
        """Tasks per state in the latest report."""
        return queue_totals(self.report)

    def render(self) -> Content:
        """The queue line."""
        return Content(queue_text(self.report))

    def on_click(self, event: events.Click) -> None:
        """Ask for the queue dialog."""
        event.stop()
        self.post_message(self.Selected())
