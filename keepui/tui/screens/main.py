"""MainScreen: search bar, search history, one result tab per search, and the hit's details."""

from __future__ import annotations

import re
import threading

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Select, TabbedContent
from textual.worker import get_current_worker

from keepui.tui.messages import (
    EngineFailed,
    HistoryLoaded,
    ItemLoaded,
    SearchFinished,
    SearchRecorded,
    StoreChanged,
    WriteDone,
)
from keepui.tui.screens.results import ResultsScreen
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.format import tui_words
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.keys import focus_now, list_keys
from keepui.tui.widgets.query_input import QueryInput
from keepui.tui.widgets.queue_status import QueueStatus
from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.search_bar import HISTORY_TOOLTIP, SearchBar, format_search
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import FindQuery, FindResult, Hit, SearchRecord, UsageError, Workbench

HIDDEN = {"no_evidence": "no evidence", "threshold": "below min:{min}", "dedup": "near-duplicates"}
"""How the status line names each step that hid hits (`FindResult.hidden`)."""


_MIN = re.compile(r"--min-score ([0-9.]+)")


def status_notes(result: FindResult) -> str:
    """A search's notes for the status line, short: `3 hits hidden (2 no evidence, 1 below
    min:0.5)`, then the other notes (a filter matching nothing, as of …) in the bar's words."""
    hidden = {k: n for k, n in result.hidden.items() if n}
    parts = []
    if hidden:
        total = sum(hidden.values())
        said = next((m for n in result.notes if (m := _MIN.search(n))), None)
        low = said.group(1) if said else "?"
        why = ", ".join(f"{n} {HIDDEN.get(k, k).format(min=low)}" for k, n in hidden.items())
        parts.append(f"{total} hit{'s' if total > 1 else ''} hidden ({why})")
    rest = [n for n in result.notes if not ("are hidden" in n or "folded into" in n)]
    return " · ".join(parts + [tui_words(n) for n in rest])


HINT = "Type a query and press Enter. F1 lists the keys; Ctrl+P reaches every action."
EXPERIMENTS = "Experiments: run query sets under search configurations, judge in place"


class MainScreen(ResultsScreen):
    """Where research starts: every search opens a tab; Enter on a hit opens the document."""

    BINDINGS = list_keys(
        [
            # Keys that move the focus are priority bindings that move it at once (`focus_now`),
            # so keys typed right after them (a burst from tmux) land in the new place; letter
            # keys are priority bindings too, off in input mode (`list_keys`).
            Binding("slash", "focus_search", "Search", priority=True),
            Binding("down", "to_results", "Results", priority=True),
            Binding("escape", "back", "Leave", priority=True),
            Binding("tab", "cycle_focus(1)", "Next pane", show=False, priority=True),
            Binding("shift+tab", "cycle_focus(-1)", "Previous pane", show=False, priority=True),
            Binding("h", "toggle_history", "History", show=False),
            # the search bar's own Ctrl+Y is shown in the footer in INPUT mode; this one keeps
            # the key (and the palette's command) in LIST mode: toggle, then `/` and type
            Binding("ctrl+y", "toggle_older", "History", show=False, tooltip=HISTORY_TOOLTIP),
            Binding("c", "compare", "Compare"),
            Binding(
                "b",
                "facets",
                "Facets",
                tooltip="Facets: tag values of this tab's hits (or the store), to filter by",
            ),
            Binding("r", "rerun", "Re-run", show=False),
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
            Binding("E", "experiments", "Experiments", show=False, tooltip=EXPERIMENTS),
            Binding("w", "close_tab", "Close tab", show=False),
            Binding("n", "name_tab", "Name tab", show=False),
            Binding(
                "s", "export_tab", "Export tab", show=False, tooltip="Export tab: JSON or Markdown"
            ),
            Binding("left_square_bracket", "tab(-1)", "Prev tab", show=False),
            Binding("right_square_bracket", "tab(1)", "Next tab", show=False),
            Binding("a", "add_note", "Note"),
            Binding("f", "add_file", "File", show=False),
            Binding("t", "edit_tags", "Tags"),
            Binding("e", "edit", "Edit", show=False),
            Binding("y", "copy_id", "Copy id", show=False),
            Binding("Y", "copy_json", "Copy JSON", show=False),
            Binding("x", "delete", "Delete", show=False),
            Binding("X", "purge", "Purge", show=False),
        ]
    )

    AUTO_FOCUS = ""
    """Nothing is focused for us: the bar is on mount, and after Escape nothing may be."""

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(workbench)
        self.history: list[SearchRecord] = []
        self._search_seq = 0
        """The newest new search's number: an older one's results are dropped."""
        self._ran_seq = 0
        self._turn = threading.Condition()

    def compose(self) -> ComposeResult:
        """Search bar on top; history, result tabs and details below; status and keys last."""
        # the store's search configurations join the mode selector (settings only: no I/O)
        yield SearchBar(configs=self.wb.tuning.configs(), id="search-bar")
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
        box = self._box()
        box.recall = self._recall
        focus_now(box)
        self.load_history()
        self.watch(self.app, "queue", self._queue_moved, init=False)
        self.watch(self.app, "theme", self._theme_chosen, init=False)

    # -- workers --------------------------------------------------------------------------------
    def run_search(self, q: FindQuery, pane_id: str | None = None) -> None:
        """Search in a worker: a new search (a new tab) supersedes the one still running; a
        refresh (of tab `pane_id`) runs beside it."""
        if pane_id is None:
            self._search_seq += 1
            self._find(q, None, self._search_seq)
        else:
            self._refresh(q, pane_id)

    @work(thread=True, group="search", exit_on_error=False)
    def _find(self, q: FindQuery, pane_id: str | None, seq: int) -> None:
        """Find in a worker, then record the search in the history. A search superseded
        meanwhile (a newer one was started) opens no tab, but it ran: it is in the history
        with its hits, one Enter away. (Not an exclusive worker: that would cancel a search
        before it ran.)"""
        try:
            result = self.wb.find_query(q)
            if seq == self._search_seq:
                self.post_message(SearchFinished(q, result, pane_id, seq))
            with self._turn:  # searches enter the history in the order they were asked
                worker = get_current_worker()
                while self._ran_seq < seq - 1 and not worker.is_cancelled:  # cancelled: quit
                    self._turn.wait(0.2)
            # Written while the UI paints the results: off the Enter-to-paint path.
            ids = [h.id for h in result.hits]
            self.post_message(SearchRecorded(self.wb.record_search(q, ids)))
        finally:
            with self._turn:
                self._ran_seq = max(self._ran_seq, seq)
                self._turn.notify_all()

    @work(thread=True, exclusive=True, group="refresh", exit_on_error=False)
    def _refresh(self, q: FindQuery, pane_id: str) -> None:
        """Run a tab's search again in a worker (not recorded in the history)."""
        result = self.wb.find_query(q)
        if not get_current_worker().is_cancelled:
            self.post_message(SearchFinished(q, result, pane_id))

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def load_history(self) -> None:
        """Read the search history in a worker."""
        self.post_message(HistoryLoaded(self.wb.searches(100)))

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def load_preview(self, hit: Hit) -> None:
        """Read the hit's matched version (and the current one, when older) for the detail."""
        current = self.wb.get(hit.id) if hit.version else None
        self.post_message(ItemLoaded(self.wb.get(hit.matched), "preview", hit, current))

    # -- messages -------------------------------------------------------------------------------
    @on(SearchBar.Submitted)
    def _search(self, event: SearchBar.Submitted) -> None:
        self.query_one("#status", StatusBar).activity = "searching…"
        self.run_search(event.q)

    @on(SearchBar.Invalid)
    def _invalid(self, event: SearchBar.Invalid) -> None:
        self.app.post_message(EngineFailed(event.error))

    async def on_search_finished(self, message: SearchFinished) -> None:
        """Open a tab for a new search, or refresh the tab it came from.

        The focus stays where the user left it (typing goes on in the bar); only when it was
        in another tab's hits does it follow to the new tab, the cursor on its first hit.
        """
        tabs = self.query_one("#results", ResultTabs)
        if message.pane_id is not None:
            pane = tabs.pane(message.pane_id)
            if pane is not None:
                pane.show(message.result)
                self.judged_after_search(pane)
            return
        if message.seq != self._search_seq:
            return  # superseded by a newer search
        self.query_one("#status", StatusBar).activity = ""
        in_hits = isinstance(self.focused, ResultPane)
        pane = await tabs.add_result(message.q, message.result)
        self.judged_after_search(pane)
        self._show_notes(pane)
        if in_hits:
            focus_now(pane)

    def _theme_chosen(self, name: str) -> None:
        """A theme picked in the workbench is the next session's too."""
        from keepui.tui.theming import save_theme

        save_theme(self.wb.settings.store, name)

    def _show_notes(self, pane: ResultPane | None) -> None:
        """What the active tab's search said (hits hidden, a filter matching nothing) goes in
        the status line, where it covers nothing."""
        self.query_one("#status", StatusBar).notice = status_notes(pane.result) if pane else ""

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
        """Run a past search again in a new tab (and show it in the bar to refine, the
        cursor at the end)."""
        self.query_one("#search-bar", SearchBar).set_query(record.q)
        self.run_search(record.q)

    @on(ResultPane.HitHighlighted)
    def _highlighted(self, event: ResultPane.HitHighlighted) -> None:
        tabs = self.query_one("#results", ResultTabs)
        if event.pane is not tabs.current:
            return
        detail = self.query_one("#detail", DetailPane)
        self._show_notes(event.pane)
        if event.hit is None:
            why = "".join(f"\n{tui_words(n)}" for n in event.pane.result.notes)
            detail.show_message(f"No hits for {event.pane.q.query!r}.{why}")
            return
        detail.show_hit(event.hit, event.pane.q.query)
        self.load_preview(event.hit)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        pane = self.query_one("#results", ResultTabs).current
        if pane is not None:
            if pane.stale:
                self.refresh_current()
            self.post_message(ResultPane.HitHighlighted(pane, pane.current_hit))

    def item_loaded(self, message: ItemLoaded) -> None:
        """Add the loaded text to the detail pane if that hit is still the highlighted one."""
        pane = self.query_one("#results", ResultTabs).current
        hit = message.hit
        if message.purpose != "preview" or pane is None or hit is None:
            return
        if pane.current_hit is not None and pane.current_hit.matched == hit.matched:
            detail = self.query_one("#detail", DetailPane)
            detail.show_hit(hit, pane.q.query, message.item, message.current)

    @on(ResultPane.HitChosen)
    def _open(self, event: ResultPane.HitChosen) -> None:
        from keepui.tui.screens.document import DocumentScreen

        self.app.push_screen(DocumentScreen(self.wb, event.hit.id, event.hit, event.query))

    def _queue_moved(self, report: object) -> None:
        """Background work moved: reload the preview whose document had work outstanding."""
        detail = self.query_one("#detail", DetailPane)
        pane = self.query_one("#results", ResultTabs).current
        hit = pane.current_hit if pane is not None else None
        if detail.item is not None and detail.item.pending and hit is not None:
            self.load_preview(hit)

    def on_store_changed(self, message: StoreChanged) -> None:
        """Another process (or this one) wrote: refresh the tabs and the history."""
        self.refresh_tabs()
        self.load_history()

    def after_write(self, message: WriteDone) -> None:
        """A write from here (tags, text, delete): the hits show the new versions at once."""
        if message.action != "exported":
            self.refresh_tabs()

    def refresh_tabs(self) -> None:
        """Run the active tab's search again now, and every other tab's when it is next shown.

        A hit's version is an offset from the newest one, so after a write an old hit names
        another version than it did (a tag edit moves the old head to @V{1}).
        """
        tabs = self.query_one("#results", ResultTabs)
        for pane in tabs.panes:
            pane.stale = pane is not tabs.current
        self.refresh_current()

    def refresh_current(self) -> None:
        """Run the active tab's search again, updating that tab."""
        pane = self.query_one("#results", ResultTabs).current
        if pane is not None:
            pane.stale = False
            pane_id = self.query_one("#results", ResultTabs).pane_id(pane)
            if pane_id and pane.listing:
                self.run_listing(pane.facets or {}, pane.q.limit, pane_id)
            elif pane_id:
                self.run_search(pane.q, pane_id)

    # -- actions --------------------------------------------------------------------------------
    def target(self) -> tuple[str, dict[str, object]] | None:
        """The highlighted hit."""
        pane = self.query_one("#results", ResultTabs).current
        hit = pane.current_hit if pane is not None else None
        return (hit.id, hit.to_dict()) if hit is not None else None

    def allows(self, action: str, *, typing: bool) -> bool:
        """Input mode (the search bar has the focus) and list mode get different keys."""
        if not self.is_mounted:
            return True
        in_bar = self.focused is not None and self.focused.id == "search-input"
        if action == "focus_search":
            # in the bar the box decides, in the order keys were typed (QueryInput: `/` in an
            # empty or selected box is the search key, else a letter)
            return not typing
        if action == "to_results":
            # `↓` recalling newer queries stays in the box (which posts Leave at the newest)
            return (
                in_bar
                and self.query_one("#results", ResultTabs).current is not None
                and not self._box().browsing
                # `↑` then `↓` typed fast: the box must see both, in order
                and not {"up", "down"} & self._box().keys_on_the_way
            )
        if action == "back":
            return in_bar
        if action == "cycle_focus":  # an open mode list keeps Tab for itself
            return not self.query_one("#search-mode", Select).expanded
        return super().allows(action, typing=typing)

    def _box(self) -> QueryInput:
        return self.query_one("#search-input", QueryInput)

    def _recall(self) -> list[str]:
        """Earlier queries for `↑` in the bar: newest first, each once."""
        return list(dict.fromkeys(format_search(r.q) for r in self.history))

    @on(QueryInput.Leave)
    def _leave_bar(self, event: QueryInput.Leave) -> None:
        event.stop()
        if self.query_one("#results", ResultTabs).current is not None:
            self.action_to_results()

    def action_focus_search(self) -> None:
        """Put the cursor in the search bar (input mode)."""
        focus_now(self._box())

    def action_to_results(self) -> None:
        """Down from the search bar: into the active tab's hits (list mode)."""
        focus_now(self.query_one("#results", ResultTabs).current)

    def action_back(self) -> None:
        """Escape: leave the search bar for the results (or the history), in list mode."""
        pane = self.query_one("#results", ResultTabs).current
        history = self.query_one("#history", HistoryList)
        if pane is not None:
            focus_now(pane)
        elif history.display and history.option_count:
            focus_now(history)
        else:
            self.set_focus(None)

    def action_cycle_focus(self, step: int) -> None:
        """Tab / Shift+Tab: search bar → hits → detail → history → mode → search bar."""
        cycle = [
            w
            for w in (
                self._box(),
                self.query_one("#results", ResultTabs).current,
                self.query_one("#detail", DetailPane),
                self.query_one("#history", HistoryList),
                self.query_one("#search-mode", Select),
            )
            if w is not None and w.focusable and w.display and w.region.area
        ]
        if not cycle:
            return
        here = self.focused
        start = cycle.index(here) if here in cycle else -1 if step > 0 else 0
        focus_now(cycle[(start + step) % len(cycle)])

    def action_toggle_history(self) -> None:
        """Show or hide the history sidebar."""
        history = self.query_one("#history", HistoryList)
        history.display = not history.display

    def action_toggle_older(self) -> None:
        """Ctrl+Y: the next searches also search older versions (again: current only)."""
        self.query_one("#search-bar", SearchBar).action_toggle_older()

    def action_rerun(self) -> None:
        """Run the active tab's search again."""
        self.refresh_current()

    def tabs_closed(self) -> None:
        """The last tab was closed: the hint again."""
        self.query_one("#detail", DetailPane).show_message(HINT)
        self._show_notes(None)

    def action_run_flow(self, step: bool = False) -> None:
        """Open the flow screen: query-resolve on the current query, running (or stepping)."""
        q = self._flow_query()
        if q is None:
            return
        from keepui.tui.screens.flows import FlowsScreen

        self.app.push_screen(FlowsScreen(self.wb, q, step=step))

    def action_experiments(self) -> None:
        """Open the experiments screen: query sets, configurations, metrics, judging in place."""
        from keepui.tui.screens.experiments import ExperimentsScreen

        self.app.push_screen(ExperimentsScreen(self.wb))

    def action_step_flow(self) -> None:
        """Open the flow screen in step mode: it pauses before each tick."""
        self.action_run_flow(step=True)

    def _flow_query(self) -> FindQuery | None:
        """The text being typed in the search bar, else the active tab's search."""
        bar = self.query_one("#search-bar", SearchBar)
        box = self.query_one("#search-input", Input)
        pane = self.query_one("#results", ResultTabs).current
        typed = box.value.strip()
        if pane is not None and not pane.listing and not (box.has_focus and typed):
            return pane.q
        if not typed:
            self.notify("Type a query or run a search first: the flow runs on it.")
            return None
        try:
            return bar.parse(typed)
        except UsageError as exc:
            self.app.post_message(EngineFailed(exc))
            return None
