"""ResultsScreen: a screen of result tabs: tab actions, relevance judgments and facet tabs."""

from __future__ import annotations

import threading
from typing import Any

from textual import on, work

from keepui.tui.messages import FacetsApplied, JudgmentsLoaded, ListingFinished
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.screens.compare import compare_tabs
from keepui.tui.screens.export import ask_export, ask_name
from keepui.tui.widgets.facet_filter import Selection, selection_text
from keepui.tui.widgets.keys import focus_now
from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import FindQuery, FindResult, Hit, Item, Workbench

LISTED = 200
"""Documents a tab of tag values lists (the newest first)."""


def listed_hit(item: Item) -> Hit:
    """A listed document as a result row (no scores: it was not searched for)."""
    return Hit(
        item.id, 0, 0.0, None, 1.0, item.summary, item.tags, item.created, item.updated, item.id
    )


def merge(base: Selection | None, more: Selection) -> Selection:
    """A tab's facet selection narrowed by another (a key chosen again takes the new values)."""
    return {**(base or {}), **more}


class ResultsScreen(WorkbenchScreen):
    """What the main screen does with its result tabs, besides searching.

    Judgments: `+`/`-`/`0` on a hit (ResultPane.JudgeAsked) are stored for the tab's query;
    every tab of that query then marks its judged rows and shows `judged 7/20 · nDCG@10 0.81`.
    Facets: `b` counts the tag values of the active tab's hits (or of the whole store); the
    values chosen open a tab with the same search keeping only the hits carrying them (AND
    across keys, OR within a key), or, with no tab, the documents carrying them.
    """

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(workbench)
        self._judging = threading.Lock()

    @property
    def tabs(self) -> ResultTabs:
        """The result tabs."""
        return self.query_one("#results", ResultTabs)

    # -- judgments ----------------------------------------------------------------------------
    def panes_of(self, query: str) -> dict[str, list[str]]:
        """Tab id -> hit ids of every open tab searching for `query`."""
        tabs = self.tabs
        found: dict[str, list[str]] = {}
        for pane in tabs.panes:
            pane_id = tabs.pane_id(pane)
            if pane_id and not pane.listing and pane.q.query == query:
                found[pane_id] = pane.ids
        return found

    @on(ResultPane.JudgeAsked)
    def _judge(self, event: ResultPane.JudgeAsked) -> None:
        query = event.pane.q.query
        self.judge_hit(query, event.hit.id, event.grade, self.panes_of(query))

    @work(thread=True, group="judge", exit_on_error=False)
    def judge_hit(
        self, query: str, doc_id: str, grade: int | None, panes: dict[str, list[str]]
    ) -> None:
        """Store (or forget) a judgment in a worker, then report the query's judgments."""
        with self._judging:  # one at a time, in the order they were asked
            if grade is None:
                self.wb.unjudge(query, doc_id)
            else:
                self.wb.judge(query, doc_id, grade)
            self._post_judgments(query, panes)

    @work(thread=True, group="judged", exit_on_error=False)
    def load_judged(self, query: str, panes: dict[str, list[str]]) -> None:
        """Read a query's judgments in a worker (after its search painted)."""
        self._post_judgments(query, panes)

    def _post_judgments(self, query: str, panes: dict[str, list[str]]) -> None:
        grades = {j.id: j.grade for j in self.wb.judgments(query)}
        scores: dict[str, dict[str, Any]] = {}
        if grades:
            scores = {pid: self.wb.judged_score(query, ids) for pid, ids in panes.items()}
        self.post_message(JudgmentsLoaded(query, grades, scores))

    def on_judgments_loaded(self, message: JudgmentsLoaded) -> None:
        """Mark the judged rows of the query's tabs and show their score lines."""
        tabs = self.tabs
        for pane in tabs.panes:
            if pane.listing or pane.q.query != message.query:
                continue
            if message.grades or pane.grades:
                pane_id = tabs.pane_id(pane)
                pane.set_judgments(message.grades, message.scores.get(pane_id or ""))

    def judged_after_search(self, pane: ResultPane) -> None:
        """A tab was filled: read its query's judgments once it is painted."""
        pane_id = self.tabs.pane_id(pane)
        if pane_id and not pane.listing:
            query = pane.q.query
            self.call_after_refresh(self.load_judged, query, {pane_id: pane.ids})

    # -- facets -------------------------------------------------------------------------------
    def action_facets(self) -> None:
        """Browse the tag values of the active tab's hits (or of the whole store)."""
        from keepui.tui.screens.facets import FacetsScreen

        pane = self.tabs.current
        if pane is not None and pane.hits:
            what = selection_text(pane.facets) if pane.listing and pane.facets else pane.q.query
            scope = f"the {len(pane.hits)} hits of {what!r}"
            ids: list[str] | None = pane.ids
        else:
            pane, scope, ids = None, "the whole store", None

        def apply(selection: Selection) -> None:
            self.post_message(FacetsApplied(selection, pane))

        self.app.push_screen(FacetsScreen(self.wb, ids, scope, apply))

    async def on_facets_applied(self, message: FacetsApplied) -> None:
        """Open a tab of the hits (or the documents) carrying the chosen values."""
        pane = message.pane
        if isinstance(pane, ResultPane) and pane.is_attached:
            selection = merge(pane.facets, message.selection)
            if pane.listing:
                self.run_listing(selection, pane.q.limit)
                return
            new = await self.tabs.add_result(pane.q, pane.result, facets=selection)
            focus_now(new)
            self.judged_after_search(new)
        else:
            self.run_listing(message.selection, LISTED)

    @work(thread=True, exclusive=True, group="listing", exit_on_error=False)
    def run_listing(self, selection: Selection, limit: int, pane_id: str | None = None) -> None:
        """List the documents carrying the selection in a worker (newest first)."""
        items = self.wb.list_items(any_tags=selection, limit=limit)
        result = FindResult("", [listed_hit(i) for i in items], limit, mode="list")
        self.post_message(ListingFinished(selection, result, pane_id))

    async def on_listing_finished(self, message: ListingFinished) -> None:
        """Open a tab of listed documents (or refresh the one it came from)."""
        if message.pane_id is not None:
            pane = self.tabs.pane(message.pane_id)
            if pane is not None:
                pane.show(message.result)
            return
        q = FindQuery("", [], message.result.limit)
        pane = await self.tabs.add_result(q, message.result, facets=message.selection, listing=True)
        if len(message.result.hits) == message.result.limit:
            self.notify(f"Showing the {message.result.limit} newest documents that match.")
        focus_now(pane)

    # -- tab actions --------------------------------------------------------------------------
    async def action_close_tab(self) -> None:
        """Close the active result tab."""
        await self.tabs.close_current()
        if self.tabs.current is None:
            self.tabs_closed()

    def tabs_closed(self) -> None:
        """Subclasses: the last tab was closed."""

    def action_tab(self, step: int) -> None:
        """Go to the previous (-1) or next (1) result tab."""
        tabs = self.tabs
        panes = tabs.panes
        current = tabs.current
        if current is None or len(panes) < 2:
            return
        target = panes[(panes.index(current) + step) % len(panes)]
        if target.parent is not None and target.parent.id:
            tabs.active = target.parent.id
            focus_now(target)

    def action_compare(self) -> None:
        """Compare the active tab with the tab opened before it."""
        screen = compare_tabs(self.tabs)
        if screen is None:
            self.notify("Open two result tabs to compare them.", severity="warning")
        else:
            self.app.push_screen(screen)

    def action_name_tab(self) -> None:
        """Name the active result tab (its label and its export carry the name)."""
        ask_name(self, self.tabs)

    def action_export_tab(self) -> None:
        """Export the active tab's hits (ids, scores, summaries) to a JSON or Markdown file."""
        ask_export(self, self.tabs)
