"""DiffScreen: two versions side by side (or unified), changed words marked, change k of N."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from keepui.tui.widgets.diff_view import DiffPane, DiffView
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.format import short_time
from keepui.tui.widgets.keys import focus_now
from keepui_engine import VersionDiff


def diff_title(diff: VersionDiff) -> str:
    """`notes  v2 2026-11-20 09:00  →  v3 2026-11-22 12:34   +4 −1 ~2`."""
    left = f"v{diff.left_version} {short_time(diff.left_updated)}"
    right = f"v{diff.right_version} {short_time(diff.right_updated)}"
    counts = f"+{diff.added} −{diff.removed} ~{diff.changed}"
    return f"{diff.id}   {left}  →  {right}   {counts}"


def tags_summary(diff: VersionDiff) -> str:
    """`tags: −topic=a +topic=b`, or `tags unchanged`."""
    changes = [f"−{r.left}" for r in diff.tags if r.kind in ("delete", "change")]
    changes += [f"+{r.right}" for r in diff.tags if r.kind in ("insert", "change")]
    return "tags: " + " ".join(changes) if changes else "tags unchanged"


class DiffScreen(Screen[None]):
    """The diff of two versions. Escape goes back to the document.

    Args:
        diff: The comparison to show.
    """

    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(self, diff: VersionDiff) -> None:
        super().__init__()
        self.diff = diff

    def compose(self) -> ComposeResult:
        """Title, tag changes and where the view is, the panes, keys."""
        yield Static(diff_title(self.diff), id="diff-title", markup=False)
        yield Static(tags_summary(self.diff), id="diff-tags", markup=False)
        yield DiffView(self.diff.rows, id="diff-view")
        yield KeepuiFooter()

    def on_mount(self) -> None:
        """Name the panes and focus the left one."""
        left = self.query_one("#diff-left", DiffPane)
        right = self.query_one("#diff-right", DiffPane)
        left.border_title = f"v{self.diff.left_version}"
        right.border_title = f"v{self.diff.right_version}"
        if not self.diff.rows:
            left.border_subtitle = "empty"
        focus_now(left)
        self._show_position()

    def on_diff_pane_scrolled(self, message: DiffPane.Scrolled) -> None:
        """Say which change is in view."""
        self._show_position()

    def on_diff_view_moved(self, message: DiffView.Moved) -> None:
        """Say which change the cursor is on, and how lines are laid out."""
        self._show_position()

    def _show_position(self) -> None:
        view = self.query_one("#diff-view", DiffView)
        mode = "unified" if view.unified else "side by side"
        wrap = "wrap on" if view.wrap else "wrap off"
        text = f"{tags_summary(self.diff)}   ·   {view.position}   ·   {mode}, {wrap}"
        self.query_one("#diff-tags", Static).update(text)
        for pane in self.query(DiffPane):
            if pane.id == "diff-unified":
                pane.border_title = f"v{self.diff.left_version} → v{self.diff.right_version}"

    def action_back(self) -> None:
        """Back to the document."""
        self.app.pop_screen()
