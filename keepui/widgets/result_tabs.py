"""ResultTabs: one tab per search, so earlier result sets stay open while you refine."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane, Tabs

from keepui.widgets.result_pane import ResultPane
from keepui_engine import FindQuery, FindResult, SearchRecord


def tab_label(q: FindQuery, number: int) -> str:
    """`3 rivers of eur…`: the tab's number and the start of its query."""
    text = q.query if len(q.query) <= 18 else q.query[:17] + "…"
    return f"{number} {text}"


class ResultTabs(TabbedContent):
    """The open result panes, in the order their searches ran."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._opened = 0

    async def add_result(
        self, q: FindQuery, result: FindResult, record: SearchRecord | None = None
    ) -> ResultPane:
        """Open a new tab for a search and make it the active one."""
        self._opened += 1
        pane_id = f"results-{self._opened}"
        pane = ResultPane(q, result, record, id=f"{pane_id}-table")
        await self.add_pane(TabPane(tab_label(q, self._opened), pane, id=pane_id))
        self.active = pane_id
        # Textual measures the active tab's underline after the next refresh, which can come
        # before the new tab is laid out (a zero-width underline); measure once more after it.
        self.call_after_refresh(self._underline)
        return pane

    def _underline(self) -> None:
        tabs = self.query(Tabs)
        if tabs:
            tabs.first()._highlight_active(animate=False)

    @property
    def panes(self) -> list[ResultPane]:
        """Every open result pane, oldest first."""
        return list(self.query(ResultPane))

    @property
    def current(self) -> ResultPane | None:
        """The pane of the active tab."""
        if not self.active:
            return None
        found = self.get_pane(self.active).query(ResultPane)
        return found.first() if found else None

    def pane(self, pane_id: str) -> ResultPane | None:
        """The result pane of a tab, by the tab's id."""
        found = self.query(f"#{pane_id}-table")
        return found.first(ResultPane) if found else None

    def before(self, pane: ResultPane) -> ResultPane | None:
        """The pane opened just before this one (or after it, when it is the first)."""
        panes = self.panes
        i = panes.index(pane)
        if i > 0:
            return panes[i - 1]
        return panes[1] if len(panes) > 1 else None

    async def close_current(self) -> None:
        """Close the active tab."""
        if self.active:
            await self.remove_pane(self.active)
