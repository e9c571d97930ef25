"""QueueModal: the background queue's counts, running work and failures; retry or purge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static
from textual.worker import Worker, WorkerState

from keepui.tui.messages import EngineFailed, QueueChanged
from keepui.tui.screens.confirm import ConfirmModal
from keepui.tui.widgets.format import plural, short_time
from keepui.tui.widgets.keys import focus_now
from keepui.tui.widgets.queue_status import queue_text, queue_totals
from keepui_engine import Workbench


def counts_text(report: dict[str, Any]) -> str:
    """One line per task kind: `summarize   queued 2 · dead 1`, and when work is next due."""
    lines = [queue_text(report)]
    for task, states in sorted(report.get("counts", {}).items()):
        lines.append(f"  {task:<10} " + " · ".join(f"{s} {n}" for s, n in states.items()))
    if report.get("next_attempt"):
        lines.append(f"next attempt due {short_time(report['next_attempt'])}")
    return "\n".join(lines)


def failures_text(report: dict[str, Any]) -> Text:
    """Running work, then each failure with its attempts and its last error."""
    text = Text()
    for entry in report.get("running", []):
        text.append(f"running  {entry['task']}  {entry['doc_id']}\n", style="bold")
    failures = report.get("failures", [])
    for entry in failures:
        nxt = entry.get("next_attempt")
        when = f", next try {short_time(nxt)}" if nxt else ""
        tries = plural(int(entry.get("attempts") or 0), "attempt")
        text.append(f"{entry['state']:<7}  {entry['task']}  {entry['doc_id']}", style="bold")
        text.append(f"  ({tries}{when})\n")
        text.append(f"  {entry.get('error') or 'no error recorded'}\n\n")
    if not failures:
        text.append("No failures.", style="dim")
    return text


class QueueModal(ModalScreen[None]):
    """The queue seen from the TUI, updated live; `r` retries dead letters, `x` purges them.

    Both actions ask first. Failed tasks (not yet dead) retry by themselves after their backoff.

    Args:
        workbench: The Workbench whose queue it shows.
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding("r", "retry", "Retry dead"),
        Binding("x", "purge", "Purge dead"),
    ]

    @dataclass
    class Done(Message):
        """A retry or purge finished."""

        text: str
        """What happened, for a notification."""

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(classes="modal")
        self.wb = workbench
        self.report: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        """Counts, failures (scrollable), buttons."""
        with Vertical(classes="modal-box", id="queue-box"):
            yield Label("Background queue", classes="modal-title")
            yield Static("loading…", id="queue-counts", markup=False)
            with VerticalScroll(id="queue-failures-box"):
                yield Static(id="queue-failures", markup=False)
            with Horizontal(classes="modal-buttons"):
                yield Button("Retry dead", id="queue-retry", variant="primary")
                yield Button("Purge dead", id="queue-purge", variant="error")
                yield Button("Close", id="queue-close")

    def on_mount(self) -> None:
        """Show the app's latest report, follow it, and ask for a fresh one."""
        focus_now(self.query_one("#queue-close", Button))
        self.watch(self.app, "queue", self._show)
        self.load()

    @work(thread=True, exclusive=True, group="queue", exit_on_error=False)
    def load(self) -> None:
        """Read the queue in a worker; the app stores the report and every view follows it."""
        self.app.post_message(QueueChanged(self.wb.pending()))

    def _show(self, report: dict[str, Any] | None) -> None:
        if report is None:
            return
        self.report = report
        self.query_one("#queue-counts", Static).update(counts_text(report))
        self.query_one("#queue-failures", Static).update(failures_text(report))
        dead = queue_totals(report)["dead"]
        self.query_one("#queue-retry", Button).disabled = not dead
        self.query_one("#queue-purge", Button).disabled = not dead

    @property
    def dead(self) -> int:
        """Dead letters in the report shown."""
        return queue_totals(self.report)["dead"]

    # -- actions ----------------------------------------------------------------------------
    def action_retry(self) -> None:
        """Put dead letters back in the queue, after a confirmation."""
        n = self.dead
        if not n:
            self.notify("No dead letters to retry; failed tasks retry by themselves.")
            return
        self._confirm(
            f"Retry {plural(n, 'dead task')}?",
            "They go back to the queue with a fresh attempt count; the worker runs them next.",
            "Retry",
            lambda: f"retried {plural(self.wb.pending_retry(), 'dead task')}",
        )

    def action_purge(self) -> None:
        """Delete dead letters and their errors, after a confirmation."""
        n = self.dead
        if not n:
            self.notify("No dead letters to purge.")
            return
        self._confirm(
            f"Purge {plural(n, 'dead task')}?",
            "They and their errors are deleted; the documents keep their current summaries.",
            "Purge",
            lambda: f"purged {plural(self.wb.pending_purge(), 'dead task')}",
        )

    def _confirm(self, title: str, question: str, label: str, op: Callable[[], str]) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.run_op(op)

        self.app.push_screen(ConfirmModal(title, question, label), answered)

    @work(thread=True, exclusive=True, group="queue-op", exit_on_error=False)
    def run_op(self, op: Callable[[], str]) -> None:
        """Retry or purge in a worker, then report the new queue."""
        text = op()
        self.app.post_message(QueueChanged(self.wb.pending()))
        self.post_message(self.Done(text))

    def on_queue_modal_done(self, message: Done) -> None:
        """Say what happened."""
        self.notify(message.text, markup=False)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            self.app.post_message(EngineFailed(event.worker.error))

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"queue-retry": self.action_retry, "queue-purge": self.action_purge}
        actions.get(event.button.id or "", self.action_close)()

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
