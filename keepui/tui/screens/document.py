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

from keepui.tui.messages import (
    DiffReady,
    DocumentLoaded,
    SimilarLoaded,
    StoreChanged,
    VersionLoaded,
    WriteDone,
)
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.format import (
    first_line,
    mark_words,
    num,
    one_line,
    pending_text,
    short_time,
    tag_pairs,
)
from keepui.tui.widgets.hit_row import readable_title, short_id
from keepui.tui.widgets.keys import OPTION_KEYS, focus_now, list_keys
from keepui.tui.widgets.parts_tree import PartsTree
from keepui.tui.widgets.queue_status import QueueStatus
from keepui.tui.widgets.status_bar import StatusBar
from keepui.tui.widgets.version_timeline import VersionTimeline
from keepui_engine import Hit, Item, Part, Workbench

SIMILAR = 8


class SimilarList(OptionList):
    """Documents close to this one; Enter opens one."""

    BINDINGS = OPTION_KEYS


class DocText(Static):
    """The text shown (a version or a part), the search's words marked."""

    COMPONENT_CLASSES = {"doc-text--match", "doc-text--title"}


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
    """The header of a document version: id, version, times, tags (of that version)."""
    text = Text()
    text.append(item.id, style="bold")
    where = "current" if item.offset == 0 else f"@V{{{item.offset}}}"
    text.append(f"   version {item.version} of {item.versions} ({where})\n")
    text.append(f"created {short_time(item.created)}   updated {short_time(item.updated)}\n")
    text.append("tags: " + (" ".join(tag_pairs(item.tags)) or "none"))
    return text


def similar_label(hit: Hit) -> Content:
    """`0.719  Rivers of Europe  file:///…/rivers.md`: score, title, the id dimmed."""
    title = readable_title(hit)
    shown = "" if title == hit.id else f"{one_line(title, 24)}  "
    return Content.assemble(f"{num(hit.score)}  {shown}", (short_id(hit.id, 14), "dim"))


def wrapped_line(text: str, offset: int, width: int) -> int:
    """About which screen line of `text` wrapped at `width` holds the character at `offset`."""
    before = text[:offset].split("\n")
    width = max(width, 1)
    return (
        sum(max(len(line) - 1, 0) // width + 1 for line in before[:-1]) + len(before[-1]) // width
    )


class DocumentScreen(WorkbenchScreen):
    """Everything about one document. Escape goes back to the results.

    Opened from a hit, it shows what matched: the matched version under the timeline's cursor,
    the matched part selected and shown, the search's words marked and scrolled to.

    Args:
        workbench: The Workbench.
        doc_id: The document to show.
        hit: The hit it was opened from (its version and part are shown first).
        query: The words searched for (marked in the text).
    """

    BINDINGS = list_keys(
        [
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
    )

    def __init__(
        self, workbench: Workbench, doc_id: str, hit: Hit | None = None, query: str = ""
    ) -> None:
        super().__init__(workbench)
        self.doc_id = doc_id
        self.hit = hit
        self.query_text = query
        self.item: Item | None = None
        """The current version."""
        self.shown: Item | None = None
        """The version under the timeline's cursor (the header, parts and text follow it)."""
        self.similar: list[Hit] = []
        self._similar_for: str | None = None  # the summary the similar items were found for
        self._want_part = hit.part_index if hit is not None else 0

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
                yield DocText(id="doc-text", markup=False)
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
        focus_now(self.query_one("#timeline"))
        self.load_document(self.hit.version if self.hit is not None else 0)
        self.watch(self.app, "queue", self._queue_moved, init=False)

    @work(thread=True, exclusive=True, group="document", exit_on_error=False)
    def load_document(self, offset: int = 0) -> None:
        """Read the document, its timeline, and the version at `offset` with its parts, in a
        worker: store reads only, which never wait for background work (the similar items,
        which need the model, follow in `load_similar`)."""
        item = self.wb.get(self.doc_id)
        versions = self.wb.history(self.doc_id)
        shown = item if offset == 0 else self.wb.get(self.doc_id, offset)
        parts = self.wb.parts(self.doc_id, offset if offset else None)
        self.post_message(DocumentLoaded(item, versions, parts, shown))

    @work(thread=True, exclusive=True, group="similar", exit_on_error=False)
    def load_similar(self, item: Item) -> None:
        """Find the documents close to this one in a worker (the model embeds its summary,
        sharing the CPU with background work: the document is on screen meanwhile)."""
        similar: list[Hit] = []
        if item.summary.strip():
            # Similar means close in meaning: the dense channel alone.
            found = self.wb.find(item.summary[:500], limit=SIMILAR + 1, mode="dense")
            similar = [h for h in found.hits if h.id != item.id][:SIMILAR]
        self.post_message(SimilarLoaded(item.summary, similar))

    @work(thread=True, exclusive=True, group="version", exit_on_error=False)
    def load_version(self, offset: int) -> None:
        """Read one version and its parts in a worker."""
        item = self.wb.get(self.doc_id, offset)
        self.post_message(VersionLoaded(item, self.wb.parts(self.doc_id, offset or None)))

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def load_diff(self, left: int, right: int) -> None:
        """Compare two versions (by offset) in a worker."""
        self.post_message(DiffReady(self.wb.diff(self.doc_id, left, right)))

    def on_document_loaded(self, message: DocumentLoaded) -> None:
        """Fill every pane; the first time, put the timeline's cursor on the matched version."""
        first = self.item is None
        self.item = message.item
        self._show_pending(message.item)
        timeline = self.query_one("#timeline", VersionTimeline)
        shown = message.shown or message.item
        if first:
            rows = [v.offset for v in message.versions]
            timeline.set_versions(message.versions, row=rows.index(shown.offset))
        else:
            timeline.set_versions(message.versions)
        if message.item.summary != self._similar_for:  # a new summary: find them again
            self._similar_for = message.item.summary
            self.query_one("#similar").border_title = "similar …"
            self.load_similar(message.item)
        current = timeline.current
        if first or current is None or current.offset == shown.offset:
            self._show_version(shown, message.parts)
        else:
            self.load_version(current.offset)

    def on_similar_loaded(self, message: SimilarLoaded) -> None:
        """List the similar items (an answer for an older summary is dropped)."""
        if message.summary != self._similar_for:
            return
        self.similar = message.similar
        similar = self.query_one("#similar", SimilarList)
        similar.border_title = "similar"
        similar.clear_options()
        similar.add_options(
            Option(similar_label(h), id=f"sim-{i}") for i, h in enumerate(message.similar)
        )
        if message.similar:
            similar.highlighted = 0

    def on_version_loaded(self, message: VersionLoaded) -> None:
        """Show the version the timeline's cursor is on (a late answer for another is dropped)."""
        current = self.query_one("#timeline", VersionTimeline).current
        if current is not None and current.version == message.item.version:
            self._show_version(message.item, message.parts)

    def _show_version(self, item: Item, parts: list[Part]) -> None:
        """Header, parts and text of one version (the matched part first, once)."""
        self.shown = item
        self.query_one("#doc-header", Static).update(describe_item(item))
        tree = self.query_one("#parts", PartsTree)
        tree.display = bool(parts)
        want, self._want_part = self._want_part, 0
        tree.set_parts(parts, select=want)
        if not (want and any(p.part == want for p in parts)):
            self._show_text(item)

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

    def _show_text(self, item: Item) -> None:
        content = self.query_one("#doc-content", VerticalScroll)
        where = "current" if item.offset == 0 else f"@V{{{item.offset}}}"
        content.border_title = f"text · v{item.version} ({where})"
        body = item.text if item.text is not None else f"(summary only)\n{item.summary}"
        self._set_text(Text(body))

    def _set_text(self, body: Text) -> None:
        """Show a text with the search's words marked, scrolled to the first of them."""
        text = self.query_one("#doc-text", DocText)
        style = text.get_component_rich_style("doc-text--match")
        first = mark_words(body, self.query_text, style)
        text.update(body)
        content = self.query_one("#doc-content", VerticalScroll)
        line = wrapped_line(body.plain, first, content.size.width - 2) if first else 0
        # after the refresh that lays out the new text: before it, the scroll would be clamped to
        # the old text's height (and land short of the match on a slow frame)
        content.call_after_refresh(content.scroll_to, y=max(line - 2, 0), animate=False)

    @on(VersionTimeline.Highlighted)
    def _version(self, event: VersionTimeline.Highlighted) -> None:
        if self.shown is None:
            return
        if event.version.version != self.shown.version:
            self.load_version(event.version.offset)
        elif event.again:  # `g`/`G` on the version shown: its whole text, not a part
            self.query_one("#parts", PartsTree).unselect()
            self._show_text(self.shown)

    @on(VersionTimeline.Picked)
    def _picked(self, event: VersionTimeline.Picked) -> None:
        self.load_diff(event.left.offset, event.right.offset)

    @on(VersionTimeline.Unpaired)
    def _unpaired(self) -> None:
        self.notify("This document has one version: nothing to compare yet.", severity="warning")

    def on_diff_ready(self, message: DiffReady) -> None:
        """Show the diff screen."""
        from keepui.tui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(message.diff))

    @on(PartsTree.PartChosen)
    def _part(self, event: PartsTree.PartChosen) -> None:
        part = event.part
        if part is None:
            if self.shown is not None:
                self._show_text(self.shown)
            return
        count = len(self.query_one("#parts", PartsTree).parts)
        content = self.query_one("#doc-content")
        content.border_title = f"part {part.part} of {count} · {part.kind} · {part.position}"
        body = Text()
        text = part.text or part.summary
        opening = first_line(text, 400).lstrip("#* ").strip()
        if part.title and opening != part.title.strip():
            # the whole title, wrapped (the tree's line may cut it)
            title = self.query_one("#doc-text", DocText).get_component_rich_style("doc-text--title")
            body.append(part.title + "\n\n", style=title)
        body.append(text)
        self._set_text(body)

    @on(OptionList.OptionSelected, "#similar")
    def _open_similar(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.similar):
            self.app.push_screen(DocumentScreen(self.wb, self.similar[event.option_index].id))

    def on_store_changed(self, message: StoreChanged) -> None:
        """Reload: a new version may have arrived (and new similar items)."""
        self._similar_for = None
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
