"""ErrorModal: a failure shown with its title and what to do (never a traceback)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from keepui.tui.widgets.keys import focus_now
from keepui_engine import KeepuiError


def describe(error: BaseException) -> tuple[str, str]:
    """(title, message) for any error: a KeepuiError's own, else a generic title."""
    if isinstance(error, KeepuiError):
        return error.title, error.message
    return (
        "Unexpected error",
        f"{type(error).__name__}: {error}. The workbench is still running; if this happens "
        "again, please report it with what you were doing.",
    )


class ErrorModal(ModalScreen[None]):
    """A dialog with an error's title and message; Enter or Escape closes it.

    Args:
        title: A short heading.
        message: What went wrong and what to do about it.
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("enter", "close", "Close", show=False),
    ]

    def __init__(self, title: str, message: str) -> None:
        super().__init__(classes="modal")
        self.error_title = title
        self.message = message

    def compose(self) -> ComposeResult:
        """The title, the message and an OK button."""
        with Vertical(classes="modal-box error-box"):
            yield Label(self.error_title, id="error-title", classes="modal-title")
            yield Static(self.message, id="error-message", markup=False)
            yield Button("OK", id="error-ok", variant="error")

    def on_mount(self) -> None:
        """Focus the button so Enter closes the dialog."""
        focus_now(self.query_one("#error-ok", Button))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Close."""
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
