"""CompareScreen: how one result tab differs from another (ids entered, left, moved)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import ResultComparison, compare_results


def comparison_text(first: str, second: str, cmp: ResultComparison) -> str:
    """A plain-text report of a comparison between two labelled result lists."""
    lines = [f"from  {first}", f"to    {second}", ""]
    lines.append(f"entered ({len(cmp.entered)})")
    lines += [f"  + {d}" for d in cmp.entered] or ["  none"]
    lines.append(f"left ({len(cmp.left)})")
    lines += [f"  - {d}" for d in cmp.left] or ["  none"]
    lines.append(f"moved ({len(cmp.moved)})")
    lines += [f"  {'↑' if b < a else '↓'} {d}  #{a} → #{b}" for d, a, b in cmp.moved] or ["  none"]
    lines.append(f"same rank ({len(cmp.kept)})")
    lines += [f"  = {d}" for d in cmp.kept] or ["  none"]
    return "\n".join(lines)


class CompareScreen(ModalScreen[None]):
    """The comparison of two result tabs; Escape closes it.

    Args:
        first: Label of the earlier tab.
        second: Label of the later tab.
        comparison: What differs.
    """

    BINDINGS = [Binding("escape", "close", "Close"), Binding("q", "close", "Close", show=False)]

    def __init__(self, first: str, second: str, comparison: ResultComparison) -> None:
        super().__init__()
        self.first = first
        self.second = second
        self.comparison = comparison

    def compose(self) -> ComposeResult:
        """Title and report."""
        with VerticalScroll(classes="modal-box", id="compare-box"):
            yield Label("Compare result tabs", classes="modal-title")
            yield Static(
                comparison_text(self.first, self.second, self.comparison),
                id="compare-body",
                markup=False,
            )

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)


def _label(pane: ResultPane) -> str:
    number = ResultTabs.number(pane)
    return f"tab {'?' if number is None else number}: {pane.tab_name or pane.q.query}"


def compare_tabs(tabs: ResultTabs) -> CompareScreen | None:
    """The comparison of the active tab with the one opened before it (None: fewer than two)."""
    current = tabs.current
    other = tabs.before(current) if current is not None else None
    if current is None or other is None:
        return None
    first, second = sorted((other, current), key=lambda p: tabs.panes.index(p))
    comparison = compare_results(first.ids, second.ids)
    return CompareScreen(_label(first), _label(second), comparison)
