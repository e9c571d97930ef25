"""DocumentScreen: one document's version timeline, parts, similar items and text."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from keepui.messages import DiffReady, DocumentLoaded, ItemLoaded, StoreChanged, WriteDone
from keepui.screens.base import WorkbenchScreen
from keepui.widgets.footer import KeepuiFooter
from keepui.widgets.format import first_line, num, pending_text, short_time, tag_pairs
from keepui.widgets.keys import OPTION_KEYS
from keepui.widgets.parts_tree import PartsTree
from keepui.widgets.queue_status import QueueStatus
from keepui.widgets.status_bar import StatusBar
from keepui.widgets.version_timeline import VersionTimeline
from keepui_engine import Hit, Item, Workbench

SIMILAR = 8


class SimilarList(OptionList):
    """Documents close to this one; Enter opens one."""

    BINDINGS = OPTION_KEYS


def describe_pending(item: Item) -> Text:
    """The document's unfinished background work, one task a line (failures marked)."""
    text = Text()
    for i, entry in enumerate(item.pending):
        failed = entry.get("state") in ("failed", "dead")
        text.append("\n" if i else "")
        text.append("⚠ " if failed else "… ", style="bold" if failed else "")
        text.append(pending_text(entry))
    return text


def describe_item(item: Item) -> Text:
    """The header of a document version: id, version, times, tags."""
    text = Text()
    text.append(item.id, style="bold")
    where = "current" if item.offset == 0 else f"@V{{{item.offset}}}"
    text.append(f"   version {item.version} of {item.versions} ({where})\n")
    text.append(f"created {short_time(item.created)}   updated {short_time(item.updated)}\n")
    text.append("tags: " + (" ".join(tag_pairs(item.tags)) or "none"))
    return text


class DocumentScreen(WorkbenchScreen):
    """Everything about one document. Escape goes back to the results.

    Args:
        workbench: The Workbench.
        doc_id: The document to show.
    """

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("y", "copy_id", "Copy id"),
        Binding("Y", "copy_json", "Copy JSON", show=False),
        Binding("e", "edit", "Edit"),
        Binding("t", "edit_tags", "Tags"),
        Binding("x", "delete", "Delete"),
        Binding("X", "purge", "Purge", show=False),
        Binding("a", "add_note", "Note", show=False),
        Binding("f", "add_file", "File", show=False),
    ]

    def __init__(self, workbench: Workbench, doc_id: str) -> None:
        super().__init__(workbench)
        self.doc_id = doc_id
        self.item: Item | None = None
        self.similar: list[Hit] = []

    def compose(self) -> ComposeResult:
        """Header; timeline, parts and similar items on the left; the text on the right."""
        yield Static(id="doc-header")
        yield Static(id="doc-pending")
        with Horizontal(id="doc-body"):
            with Vertical(id="doc-side"):
                yield VersionTimeline(id="timeline")
                yield PartsTree(id="parts")
                yield SimilarList(id="similar")
            with VerticalScroll(id="doc-content"):
                yield Static(id="doc-text", markup=False)
        with Horizontal(id="status-row"):
            yield StatusBar(id="status")
            yield QueueStatus(id="queue-status")
        yield KeepuiFooter()

    def on_mount(self) -> None:
        """Title the panes and load the document."""
        self.query_one("#timeline").border_title = "versions"
        self.query_one("#parts").border_title = "parts"
        self.query_one("#similar").border_title = "similar"
        self.query_one("#doc-content").border_title = "text"
        self.query_one("#doc-header", Static).update(f"loading {self.doc_id}…")
        self.query_one("#doc-pending").display = False
        self.query_one("#timeline").focus()
        self.load_document()
        self.watch(self.app, "queue", self._queue_moved, init=False)

    @work(thread=True, exclusive=True, group="document", exit_on_error=False)
    def load_document(self) -> None:
        """Read the document, its timeline, parts and similar items in a worker."""
        item = self.wb.get(self.doc_id)
        versions = self.wb.history(self.doc_id)
        parts = self.wb.parts(self.doc_id)
        similar: list[Hit] = []
        if item.summary.strip():
            # Similar means close in meaning: the dense channel alone.
            found = self.wb.find(item.summary[:500], limit=SIMILAR + 1, mode="dense")
            similar = [h for h in found.hits if h.id != item.id][:SIMILAR]
        self.post_message(DocumentLoaded(item, versions, parts, similar))

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def load_diff(self, left: int, right: int) -> None:
        """Compare two versions (by offset) in a worker."""
        self.post_message(DiffReady(self.wb.diff(self.doc_id, left, right)))

    def on_document_loaded(self, message: DocumentLoaded) -> None:
        """Fill every pane."""
        self.item = message.item
        self.similar = message.similar
        self.query_one("#doc-header", Static).update(describe_item(message.item))
        self._show_pending(message.item)
        self.query_one("#timeline", VersionTimeline).set_versions(message.versions)
        self.query_one("#parts", PartsTree).set_parts(message.parts)
        similar = self.query_one("#similar", SimilarList)
        similar.clear_options()
        similar.add_options(
            Option(Content(f"{num(h.score)}  {h.id}  {first_line(h.summary, 30)}"), id=f"sim-{i}")
            for i, h in enumerate(message.similar)
        )
        if message.similar:
            similar.highlighted = 0
        self._show_text(message.item)

    def _show_pending(self, item: Item) -> None:
        box = self.query_one("#doc-pending", Static)
        box.display = bool(item.pending)
        box.set_class(any(e.get("state") in ("failed", "dead") for e in item.pending), "-failed")
        box.update(describe_pending(item))

    def _queue_moved(self, report: dict[str, Any] | None) -> None:
        """Background work moved: reload when this document had (or now has) work outstanding."""
        if self.item is None:
            return
        listed = [*(report or {}).get("failures", []), *(report or {}).get("running", [])]
        if self.item.pending or any(e.get("doc_id") == self.doc_id for e in listed):
            self.load_document()

    def _show_text(self, item: Item, title: str | None = None) -> None:
        content = self.query_one("#doc-content", VerticalScroll)
        where = "current" if item.offset == 0 else f"@V{{{item.offset}}}"
        content.border_title = title or f"text · v{item.version} ({where})"
        body = item.text if item.text is not None else f"(summary only)\n{item.summary}"
        self.query_one("#doc-text", Static).update(body)

    @on(VersionTimeline.Highlighted)
    def _version(self, event: VersionTimeline.Highlighted) -> None:
        if self.item is not None and event.version.version != self.item.version:
            self.load_item(self.doc_id, "version", event.version.offset)
        elif self.item is not None:
            self._show_text(self.item)

    def item_loaded(self, message: ItemLoaded) -> None:
        """Show the text of the version under the timeline's cursor."""
        timeline = self.query_one("#timeline", VersionTimeline)
        current = timeline.current
        if message.purpose == "version" and current and current.version == message.item.version:
            self._show_text(message.item)

    @on(VersionTimeline.Picked)
    def _picked(self, event: VersionTimeline.Picked) -> None:
        self.load_diff(event.left.offset, event.right.offset)

    @on(VersionTimeline.Unpaired)
    def _unpaired(self) -> None:
        self.notify("This document has one version: nothing to compare yet.", severity="warning")

    def on_diff_ready(self, message: DiffReady) -> None:
        """Show the diff screen."""
        from keepui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(message.diff))

    @on(PartsTree.PartChosen)
    def _part(self, event: PartsTree.PartChosen) -> None:
        part = event.part
        if part is None:
            if self.item is not None:
                self._show_text(self.item)
            return
        self.query_one("#doc-content").border_title = f"part {part.address} · {part.position}"
        self.query_one("#doc-text", Static).update(part.text or part.summary)

    @on(OptionList.OptionSelected, "#similar")
    def _open_similar(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.similar):
            self.app.push_screen(DocumentScreen(self.wb, self.similar[event.option_index].id))

    def on_store_changed(self, message: StoreChanged) -> None:
        """Reload: a new version may have arrived."""
        self.load_document()

    def after_write(self, message: WriteDone) -> None:
        """Leave when the document is gone; otherwise the store poll reloads it."""
        if message.doc_id == self.doc_id and message.action in ("deleted", "purged"):
            self.dismiss_to_results()

    def dismiss_to_results(self) -> None:
        """Go back to the previous screen."""
        if len(self.app.screen_stack) > 1 and self.app.screen is self:
            self.app.pop_screen()

    def target(self) -> tuple[str, dict[str, object]] | None:
        """This document."""
        return (self.doc_id, self.item.to_dict() if self.item else {"id": self.doc_id})

    def action_back(self) -> None:
        """Back to the results."""
        self.dismiss_to_results()
