"""ResultTabs: one tab per search, so earlier result sets stay open while you refine."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane, Tabs

from keepui.tui.widgets.facet_filter import Selection, selection_text
from keepui.tui.widgets.format import one_line
from keepui.tui.widgets.judged_line import JudgedLine
from keepui.tui.widgets.result_pane import DEFAULT_WIDTH, ResultPane
from keepui.tui.widgets.search_bar import HISTORY_MARK
from keepui_engine import FindQuery, FindResult, SearchRecord

QUERY_CHARS = 18
"""Characters of the query a tab label shows."""
FILTER_CHARS = 24
"""Characters of the filters a tab label shows."""


def tab_filters(q: FindQuery, facets: Selection | None = None) -> str:
    """`+history · bm25 · topic=x · since P7D`: the search's filters and mode, short (empty if
    none); `+history` (older versions searched too) comes first, so it is never cut off."""
    parts = [HISTORY_MARK] if q.history else []
    parts += [f"config {q.config}"] if q.config else []
    parts += [q.mode] if q.mode else []
    parts += list(q.tags)
    if facets:
        parts.append(selection_text(facets))
    moments = (("since", q.since), ("until", q.until), ("as", q.as_of))
    parts += [f"{key} {value}" for key, value in moments if value]
    if q.min_score is not None:
        parts.append(f"min {q.min_score:g}")
    for value in (q.fusion, q.rerank):
        if value:
            parts.append(value)
    if q.dedup is False:
        parts.append("no dedup")
    return one_line(" · ".join(parts), FILTER_CHARS) if parts else ""


def tab_label(
    q: FindQuery, number: int, name: str | None = None, facets: Selection | None = None
) -> str:
    """`3 auth · bm25`: the tab's number, its name or the start of its query, its filters
    (`3 auth · +history` when older versions were searched too; `3 tags · project=web|mobile`
    for documents listed by their tags)."""
    label = f"{number} {one_line(name or q.query or 'tags', QUERY_CHARS)}"
    filters = tab_filters(q, facets)
    return f"{label} · {filters}" if filters else label


class ResultTabs(TabbedContent):
    """The open result panes, in the order their searches ran."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._opened = 0

    async def add_result(
        self,
        q: FindQuery,
        result: FindResult,
        record: SearchRecord | None = None,
        *,
        facets: Selection | None = None,
        listing: bool = False,
    ) -> ResultPane:
        """Open a new tab for a search and make it the active one.

        Args:
            q: What the search asked for.
            result: What it found.
            record: Its search-history entry, when it was recorded.
            facets: Tag values its hits must carry (the facet browser's choice).
            listing: The hits are documents listed by `facets`, not searched.
        """
        self._opened += 1
        pane_id = f"results-{self._opened}"
        width = self.size.width or DEFAULT_WIDTH
        pane = ResultPane(
            q, result, record, width=width, facets=facets, listing=listing, id=f"{pane_id}-table"
        )
        label = tab_label(q, self._opened, facets=facets)
        judged = JudgedLine(id=f"{pane_id}-judged")
        await self.add_pane(TabPane(label, pane, judged, id=pane_id))
        self.active = pane_id
        # Textual measures the active tab's underline and scrolls it into view after the next
        # refresh, which can come before the new tab is laid out (a zero-width underline, a
        # tab left off screen); do both once more after it.
        self.call_after_refresh(self.show_active)
        return pane

    def show_active(self) -> None:
        """Underline the active tab and scroll the tab bar so that it is in view."""
        tabs = self.query(Tabs)
        if tabs:
            tabs.first()._highlight_active(animate=False)
            tabs.first()._scroll_active_tab()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab chosen by keys ([ ]) may sit off screen: bring it into view."""
        self.call_after_refresh(self.show_active)

    def rename(self, pane: ResultPane, name: str | None) -> None:
        """Name a tab (None: back to its query); the label keeps its number and filters."""
        number = self.number(pane)
        if number is None or pane.parent is None or not pane.parent.id:
            return
        pane.tab_name = name
        self.get_tab(pane.parent.id).label = tab_label(pane.q, number, name, pane.facets)
        self.call_after_refresh(self.show_active)

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

    @staticmethod
    def number(pane: ResultPane) -> int | None:
        """The number a pane's tab shows (`tab-7` is 7; None once it is closed)."""
        parent = pane.parent
        if parent is None or not parent.id:
            return None
        return int(parent.id.rsplit("-", 1)[-1])

    def pane_id(self, pane: ResultPane) -> str | None:
        """The id of a pane's tab (None once it is closed)."""
        parent = pane.parent
        return parent.id if parent is not None else None

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
