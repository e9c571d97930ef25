"""TooSmall: what the workbench shows in a window smaller than it can lay out."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_WIDTH = 60
MIN_HEIGHT = 15
"""The smallest window in which every screen shows at least three rows of its main list."""


def too_small(width: int, height: int) -> bool:
    """Whether a window of this size is below the minimum."""
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmall(ModalScreen[None]):
    """Says the window is too small (and how large it must be); it closes when it grows."""

    def compose(self) -> ComposeResult:
        """One message."""
        with Vertical(classes="modal-box", id="too-small-box"):
            yield Static(id="too-small-text")

    def on_mount(self) -> None:
        """Say the size."""
        self.show_size(self.app.size.width, self.app.size.height)

    def show_size(self, width: int, height: int) -> None:
        """Update the message for the window's size."""
        self.query_one("#too-small-text", Static).update(
            f"The window is too small: {width}×{height}. keepui needs at least "
            f"{MIN_WIDTH}×{MIN_HEIGHT}; make it larger (Ctrl+Q quits)."
        )
