"""ConfirmModal: ask before a destructive action (delete, purge); answers True or False."""

from __future__ import annotations

import time

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from keepui.tui.widgets.keys import focus_now


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question; `y` or the confirm button says yes, `n` or Escape says no.

    Keys typed before the dialog had the focus are dropped: a burst meant for somewhere else
    (`x` then `y` in a word typed into what the typist took for the search bar) never answers
    a question nobody saw.

    Args:
        title: The heading (e.g. "Purge notes-1?").
        question: What will happen.
        confirm: The confirm button's label.
    """

    BINDINGS = [
        Binding("escape", "answer(False)", "Cancel"),
        Binding("n", "answer(False)", "No", show=False),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(self, title: str, question: str, confirm: str = "Yes") -> None:
        super().__init__(classes="modal")
        self.confirm_title = title
        self.question = question
        self.confirm_label = confirm
        self._armed_at: float | None = None
        """When the dialog took the focus (monotonic, as key events are stamped)."""

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical(classes="modal-box confirm-box"):
            yield Label(self.confirm_title, classes="modal-title")
            yield Static(self.question, markup=False)
            with Horizontal(classes="modal-buttons"):
                yield Button(self.confirm_label, id="confirm-yes", variant="error")
                yield Button("Cancel", id="confirm-no")

    def on_mount(self) -> None:
        """Focus Cancel, so a stray Enter does nothing destructive."""
        focus_now(self.query_one("#confirm-no", Button))
        self._armed_at = time.monotonic()

    def on_key(self, event: events.Key) -> None:
        """Drop a key that was typed before the dialog had the focus (it bubbles here from
        the focused button before any binding acts on it)."""
        if self._armed_at is None or event.time < self._armed_at:
            event.stop()
            event.prevent_default()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer by button."""
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        """Answer by key."""
        self.dismiss(yes)
