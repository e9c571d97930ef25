"""FolderPicker: choose a file or a folder to add by walking the disk with the keys."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Label

from keepui.tui.widgets.keys import TREE_KEYS, focus_now

KEYS = "Enter opens a folder or picks a file · s picks the highlighted folder · ⌫ goes up · Esc"


def start_folder(typed: str) -> Path:
    """Where the picker opens: the folder typed so far, else its nearest existing parent."""
    path = Path(typed.strip() or "~").expanduser()
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate.resolve()
    return Path.home()


class PathTree(DirectoryTree):
    """The folder tree, with the list keys (j/k, g/G) and no hidden files."""

    BINDINGS = TREE_KEYS

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """Leave out hidden names."""
        return [p for p in paths if not p.name.startswith(".")]

    def action_first_line(self) -> None:
        """Go to the first line."""
        self.cursor_line = 0

    def action_last_line(self) -> None:
        """Go to the last line."""
        self.cursor_line = max(self.last_line, 0)


class FolderPicker(ModalScreen[str | None]):
    """A folder tree; answers the chosen path, or None.

    Args:
        typed: What the path box holds (the tree opens there).
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("s", "choose_folder", "Pick folder"),
        Binding("backspace", "up", "Up"),
    ]

    def __init__(self, typed: str = "") -> None:
        super().__init__(classes="modal")
        self.folder = start_folder(typed)

    def compose(self) -> ComposeResult:
        """The tree and the keys."""
        with Vertical(classes="modal-box", id="picker-box"):
            yield Label(f"Pick a file or folder under {self.folder}", classes="modal-title")
            yield PathTree(self.folder, id="picker-tree")
            yield Label(KEYS, classes="form-keys")

    def on_mount(self) -> None:
        """Start in the tree."""
        focus_now(self.query_one("#picker-tree", PathTree))

    @on(DirectoryTree.FileSelected)
    def _file(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(str(event.path))

    def action_choose_folder(self) -> None:
        """Pick the highlighted folder (or the folder of the highlighted file)."""
        node = self.query_one("#picker-tree", PathTree).cursor_node
        path = node.data.path if node is not None and node.data is not None else self.folder
        self.dismiss(str(path if path.is_dir() else path.parent))

    def action_up(self) -> None:
        """Show the parent folder."""
        tree = self.query_one("#picker-tree", PathTree)
        self.folder = Path(tree.path).resolve().parent
        tree.path = self.folder
        self.query_one(".modal-title", Label).update(f"Pick a file or folder under {self.folder}")

    def action_cancel(self) -> None:
        """Close without a choice."""
        self.dismiss(None)
