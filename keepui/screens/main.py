"""MainScreen: search bar, search history, one result tab per search, and the hit's details."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, TabbedContent

from keepui.messages import (
    EngineFailed,
    HistoryLoaded,
    ItemLoaded,
    SearchFinished,
    SearchRecorded,
    StoreChanged,
)
from keepui.screens.base import WorkbenchScreen
from keepui.screens.compare import CompareScreen
from keepui.widgets.detail_pane import DetailPane
from keepui.widgets.footer import KeepuiFooter
from keepui.widgets.history_list import HistoryList
from keepui.widgets.queue_status import QueueStatus
from keepui.widgets.result_pane import ResultPane
from keepui.widgets.result_tabs import ResultTabs
from keepui.widgets.search_bar import SearchBar, parse_search
from keepui.widgets.status_bar import StatusBar
from keepui_engine import FindQuery, Hit, SearchRecord, UsageError, Workbench, compare_results

HINT = "Type a query and press Enter. F1 lists the keys; Ctrl+P reaches every action."


class MainScreen(WorkbenchScreen):
    """Where research starts: every search opens a tab; Enter on a hit opens the document."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search"),
        Binding("escape", "back", "Back", show=False),
        Binding("h", "toggle_history", "History"),
        Binding("c", "compare", "Compare"),
        Binding("r", "rerun", "Re-run"),
        Binding(
            "ctrl+r",
            "run_flow",
            "Flow",
            tooltip="Run flow: query-resolve on the current query",
        ),
        Binding(
            "ctrl+t",
            "step_flow",
            "Step flow",
            show=False,
            tooltip="Step through flow: query-resolve on the current query, tick by tick",
        ),
        Binding("w", "close_tab", "Close tab"),
        Binding("left_square_bracket", "tab(-1)", "Prev tab", show=False),
        Binding("right_square_bracket", "tab(1)", "Next tab", show=False),
        Binding("a", "add_note", "Note"),
        Binding("f", "add_file", "File", show=False),
        Binding("t", "edit_tags", "Tags"),
        Binding("e", "edit", "Edit", show=False),
        Binding("y", "copy_id", "Copy id"),
        Binding("Y", "copy_json", "Copy JSON", show=False),
        Binding("x", "delete", "Delete", show=False),
        Binding("X", "purge", "Purge", show=False),
    ]

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(workbench)
        self.history: list[SearchRecord] = []

    def compose(self) -> ComposeResult:
        """Search bar on top; history, result tabs and details below; status and keys last."""
        yield SearchBar(id="search-bar")
        with Horizontal(id="main-body"):
            yield HistoryList(id="history")
            with Vertical(id="results-area"):
                yield ResultTabs(id="results")
                yield DetailPane(id="detail")
        with Horizontal(id="status-row"):
            yield StatusBar(id="status")
            yield QueueStatus(id="queue-status")
        yield KeepuiFooter()

    def on_mount(self) -> None:
        """Focus the search bar and load the search history."""
        self.query_one("#history", HistoryList).border_title = "history"
        self.query_one("#detail", DetailPane).show_message(HINT)
        self.query_one("#search-input", Input).focus()
        self.load_history()
        self.watch(self.app, "queue", self._queue_moved, init=False)

    # -- workers --------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, q: FindQuery, pane_id: str | None = None) -> None:
        """Find in a worker; new searches are then recorded in the history, refreshes are not."""
        result = self.wb.find_query(q)
        self.post_message(SearchFinished(q, result, pane_id))
        if pane_id is None:
            # Written while the UI paints the results: the write is off the Enter-to-paint path.
            self.post_message(SearchRecorded(self.wb.record_search(q, [h.id for h in result.hits])))

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def load_history(self) -> None:
        """Read the search history in a worker."""
        self.post_message(HistoryLoaded(self.wb.searches(100)))

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def load_preview(self, hit: Hit) -> None:
        """Read the hit's matched version for the detail pane."""
        self.post_message(ItemLoaded(self.wb.get(hit.matched), "preview", hit))

    # -- messages -------------------------------------------------------------------------------
    @on(SearchBar.Submitted)
    def _search(self, event: SearchBar.Submitted) -> None:
        self.query_one("#status", StatusBar).activity = "searching…"
        self.run_search(event.q)

    @on(SearchBar.Invalid)
    def _invalid(self, event: SearchBar.Invalid) -> None:
        self.app.post_message(EngineFailed(event.error))

    async def on_search_finished(self, message: SearchFinished) -> None:
        """Open a tab for a new search, or refresh the tab it came from."""
        self.query_one("#status", StatusBar).activity = ""
        tabs = self.query_one("#results", ResultTabs)
        if message.pane_id is not None:
            pane = tabs.pane(message.pane_id)
            if pane is not None:
                pane.show(message.result)
            return
        pane = await tabs.add_result(message.q, message.result)
        for note in message.result.notes:
            self.notify(note, timeout=4, markup=False)
        pane.focus()

    def on_search_recorded(self, message: SearchRecorded) -> None:
        """Add the search to the history (after the next paint: the results come first)."""
        record = message.record
        self.history.insert(0, record)
        for pane in reversed(self.query_one("#results", ResultTabs).panes):
            if pane.record is None and pane.q == record.q and pane.ids == record.ids:
                pane.record = record
                break
        self.call_after_refresh(self.query_one("#history", HistoryList).add_record, record)

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        """Show the stored history."""
        self.history = message.records
        self.query_one("#history", HistoryList).set_records(message.records)

    @on(HistoryList.Selected)
    def _rerun_from_history(self, event: HistoryList.Selected) -> None:
        self.rerun(event.record)

    def rerun(self, record: SearchRecord) -> None:
        """Run a past search again in a new tab (and show it in the bar to refine)."""
        self.query_one("#search-bar", SearchBar).set_query(record.q)
        self.run_search(record.q)

    @on(ResultPane.HitHighlighted)
    def _highlighted(self, event: ResultPane.HitHighlighted) -> None:
        tabs = self.query_one("#results", ResultTabs)
        if event.pane is not tabs.current:
            return
        detail = self.query_one("#detail", DetailPane)
        if event.hit is None:
            detail.show_message(f"No hits for {event.pane.q.query!r}.")
            return
        detail.show_hit(event.hit, event.pane.q.query)
        self.load_preview(event.hit)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        pane = self.query_one("#results", ResultTabs).current
        if pane is not None:
            self.post_message(ResultPane.HitHighlighted(pane, pane.current_hit))

    def item_loaded(self, message: ItemLoaded) -> None:
        """Add the loaded text to the detail pane if that hit is still the highlighted one."""
        pane = self.query_one("#results", ResultTabs).current
        hit = message.hit
        if message.purpose != "preview" or pane is None or hit is None:
            return
        if pane.current_hit is not None and pane.current_hit.matched == hit.matched:
            self.query_one("#detail", DetailPane).show_hit(hit, pane.q.query, message.item)

    @on(ResultPane.HitChosen)
    def _open(self, event: ResultPane.HitChosen) -> None:
        from keepui.screens.document import DocumentScreen

        self.app.push_screen(DocumentScreen(self.wb, event.hit.id))

    def _queue_moved(self, report: object) -> None:
        """Background work moved: reload the preview whose document had work outstanding."""
        detail = self.query_one("#detail", DetailPane)
        pane = self.query_one("#results", ResultTabs).current
        hit = pane.current_hit if pane is not None else None
        if detail.item is not None and detail.item.pending and hit is not None:
            self.load_preview(hit)

    def on_store_changed(self, message: StoreChanged) -> None:
        """Another process (or this one) wrote: refresh the open tab and the history."""
        self.refresh_current()
        self.load_history()

    def refresh_current(self) -> None:
        """Run the active tab's search again, updating that tab."""
        pane = self.query_one("#results", ResultTabs).current
        if pane is not None:
            parent = pane.parent
            pane_id = parent.id if parent is not None else None
            if pane_id:
                self.run_search(pane.q, pane_id)

    # -- actions --------------------------------------------------------------------------------
    def target(self) -> tuple[str, dict[str, object]] | None:
        """The highlighted hit."""
        pane = self.query_one("#results", ResultTabs).current
        hit = pane.current_hit if pane is not None else None
        return (hit.id, hit.to_dict()) if hit is not None else None

    def action_focus_search(self) -> None:
        """Put the cursor in the search bar."""
        self.query_one("#search-input", Input).focus()

    def action_back(self) -> None:
        """Escape: leave the search bar for the results."""
        pane = self.query_one("#results", ResultTabs).current
        if pane is not None:
            pane.focus()
        else:
            self.query_one("#history", HistoryList).focus()

    def action_toggle_history(self) -> None:
        """Show or hide the history sidebar."""
        history = self.query_one("#history", HistoryList)
        history.display = not history.display

    def action_rerun(self) -> None:
        """Run the active tab's search again."""
        self.refresh_current()

    async def action_close_tab(self) -> None:
        """Close the active result tab."""
        await self.query_one("#results", ResultTabs).close_current()
        if self.query_one("#results", ResultTabs).current is None:
            self.query_one("#detail", DetailPane).show_message(HINT)

    def action_tab(self, step: int) -> None:
        """Go to the previous (-1) or next (1) result tab."""
        tabs = self.query_one("#results", ResultTabs)
        panes = tabs.panes
        current = tabs.current
        if current is None or len(panes) < 2:
            return
        target = panes[(panes.index(current) + step) % len(panes)]
        if target.parent is not None and target.parent.id:
            tabs.active = target.parent.id
            target.focus()

    def action_run_flow(self, step: bool = False) -> None:
        """Open the flow screen: query-resolve on the current query, running (or stepping)."""
        q = self._flow_query()
        if q is None:
            return
        from keepui.screens.flows import FlowsScreen

        self.app.push_screen(FlowsScreen(self.wb, q, step=step))

    def action_step_flow(self) -> None:
        """Open the flow screen in step mode: it pauses before each tick."""
        self.action_run_flow(step=True)

    def _flow_query(self) -> FindQuery | None:
        """The text being typed in the search bar, else the active tab's search."""
        bar = self.query_one("#search-bar", SearchBar)
        box = self.query_one("#search-input", Input)
        pane = self.query_one("#results", ResultTabs).current
        typed = box.value.strip()
        if pane is not None and not (box.has_focus and typed):
            return pane.q
        if not typed:
            self.notify("Type a query or run a search first: the flow runs on it.")
            return None
        try:
            return parse_search(typed, bar.mode, bar.limit)
        except UsageError as exc:
            self.app.post_message(EngineFailed(exc))
            return None

    def action_compare(self) -> None:
        """Compare the active tab with the tab opened before it."""
        tabs = self.query_one("#results", ResultTabs)
        current = tabs.current
        other = tabs.before(current) if current is not None else None
        if current is None or other is None:
            self.notify("Open two result tabs to compare them.", severity="warning")
            return
        first, second = sorted((other, current), key=lambda p: tabs.panes.index(p))
        comparison = compare_results(first.ids, second.ids)
        self.app.push_screen(CompareScreen(_label(first), _label(second), comparison))


def _label(pane: ResultPane) -> str:
    parent = pane.parent
    number = parent.id.rsplit("-", 1)[-1] if parent is not None and parent.id else "?"
    return f"tab {number}: {pane.q.query}"
