"""FacetsScreen: the tag values of a result tab (or the whole store) with counts, to filter by."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Static

from keepui.tui.messages import FacetsLoaded
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.widgets.facet_filter import Selection, selection_words
from keepui.tui.widgets.facet_list import FacetList
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.keys import focus_now, list_keys
from keepui.tui.widgets.queue_status import QueueStatus
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import Workbench

HINT = "Space selects · Enter shows the documents · AND across keys, OR within a key"


class FacetsScreen(WorkbenchScreen):
    """Tag keys and values with how many documents carry each; choosing values filters.

    Args:
        workbench: The Workbench.
        ids: The documents to count over (a result tab's hits), or None for the whole store.
        scope: What they are, in words (`the 20 hits of "auth"`, `the whole store`).
        apply: Called with the selection when the user applies it (the screen closes first).
    """

    BINDINGS = list_keys(
        [
            Binding("escape", "back", "Back"),
            Binding("c", "clear", "Clear", tooltip="Facets: clear the selection"),
        ]
    )

    def __init__(
        self,
        workbench: Workbench,
        ids: list[str] | None,
        scope: str,
        apply: Callable[[Selection], None],
    ) -> None:
        super().__init__(workbench)
        self.ids = ids
        self.scope = scope
        self.apply = apply

    def compose(self) -> ComposeResult:
        """Header, the list of keys and values, the selection, status and keys."""
        yield Static(f"Facets of {self.scope}", id="facets-header", markup=False)
        yield Static(HINT, id="facets-hint", markup=False)
        yield FacetList(id="facet-list")
        yield Static("Nothing selected.", id="facets-selection", markup=False)
        with Horizontal(id="status-row"):
            yield StatusBar(id="status")
            yield QueueStatus(id="queue-status")
        yield KeepuiFooter()

    def on_mount(self) -> None:
        """Count the tag values in a worker; the list has the focus."""
        self.query_one("#facet-list").border_title = "tags"
        self.set_activity("counting tags…")
        focus_now(self.query_one("#facet-list", FacetList))
        self.load_facets()

    @work(thread=True, exclusive=True, group="facets", exit_on_error=False)
    def load_facets(self) -> None:
        """`Workbench.facets` over the ids (or the whole store) in a worker."""
        self.post_message(FacetsLoaded(self.wb.facets(ids=self.ids)))

    def on_facets_loaded(self, message: FacetsLoaded) -> None:
        """List the keys and values."""
        self.set_activity("")
        facets = message.facets
        self.query_one("#facet-list", FacetList).set_facets(facets)
        if not facets:
            self.query_one("#facets-selection", Static).update(
                f"No tags on {self.scope} (system tags are left out)."
            )

    @on(FacetList.Changed)
    def _changed(self, event: FacetList.Changed) -> None:
        line = self.query_one("#facets-selection", Static)
        if event.selection:
            line.update(f"Show documents with {selection_words(event.selection)}.")
        else:
            line.update("Nothing selected.")

    @on(FacetList.Applied)
    def _applied(self, event: FacetList.Applied) -> None:
        self.app.pop_screen()
        self.apply(event.selection)

    def action_clear(self) -> None:
        """Drop every selected value."""
        facets = self.query_one("#facet-list", FacetList)
        facets.chosen.clear()
        facets.set_facets(facets.facets)
        self._changed(FacetList.Changed({}))

    def action_back(self) -> None:
        """Go back without filtering."""
        self.app.pop_screen()
