"""WorkbenchScreen: the Workbench, worker failures to the error dialog, and shared item actions."""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import SuspendNotSupported
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Select
from textual.worker import Worker, WorkerState

from keepui.tui.messages import EngineFailed, ItemLoaded, WriteDone
from keepui.tui.screens.confirm import ConfirmModal
from keepui.tui.screens.forms import FileInput, FileModal, NoteInput, NoteModal, TagEdit, TagsModal
from keepui.tui.widgets.format import tag_pairs
from keepui.tui.widgets.keys import is_letter_key, is_typing
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import DeleteResult, Item, PutResult, UsageError, Workbench

Progress = Callable[[int, int, str], None] | None
"""`(done, total, source)` as the files of a folder are stored."""
MAX_LISTED = 3
"""Failed files of a folder named in the notification (the rest are counted)."""


def add_target(raw: str) -> str:
    """What the user typed in the file form, as `Workbench.ingest` takes it (`~` expanded)."""
    raw = raw.strip()
    if raw.startswith(("http://", "https://", "file://")):
        return raw
    return str(Path(raw).expanduser())


def ingest_done(
    wb: Workbench, target: str, tags: list[str], progress: Progress = None
) -> WriteDone:
    """Add one file or URL (any format; errors raise), or a folder (problems are counted).

    Raises:
        KeepuiError: The file or URL cannot be read or stored (the error dialog shows it).
    """
    if not Path(target).is_dir():
        entry = wb.ingest([target], tags=tags, strict=True).entries[0]
        notes = f"; {'; '.join(entry.notes)}" if entry.notes else ""
        text = f"{entry.status} {entry.id} (version {entry.version}){notes}"
        return WriteDone(text, entry.id or target, entry.status)
    report = wb.ingest([target], tags=tags, strict=False, progress=progress)
    counts = report.to_dict()["counts"]
    text = f"{target}: " + ", ".join(f"{n} {key}" for key, n in counts.items())
    failed = report.failed
    for entry in failed[:MAX_LISTED]:
        text += f"\n{Path(entry.source).name}: {entry.reason}"
    if len(failed) > MAX_LISTED:
        text += f"\n… and {len(failed) - MAX_LISTED} more (keepui put {target} lists them all)"
    return WriteDone(text, "", "ingested", "warning" if failed else "information")


def _put_done(r: PutResult) -> WriteDone:
    return WriteDone(f"{r.action} {r.id} (version {r.version})", r.id, r.action)


def _delete_done(r: DeleteResult) -> WriteDone:
    if r.action == "reverted":
        return WriteDone(f"reverted {r.id} to version {r.version}", r.id, r.action)
    return WriteDone(f"{r.action} {r.id} ({r.removed_versions} version(s))", r.id, r.action)


class WorkbenchScreen(Screen[None]):
    """A screen over the Workbench. Subclasses say which document the item actions target.

    Args:
        workbench: The open Workbench (the TUI owns its store).
    """

    def __init__(self, workbench: Workbench) -> None:
        super().__init__()
        self.wb = workbench

    def target(self) -> tuple[str, dict[str, object]] | None:
        """(document id, JSON-ready record) the item actions apply to, or None."""
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys for the mode the screen is in (see `allows`)."""
        return self.allows(action, typing=self.typing())

    def typing(self) -> bool:
        """Input mode: a text box has the focus, or a drop-down list is open (letters type)."""
        focused = self.focused
        return is_typing(focused) or (focused is not None and isinstance(focused.parent, Select))

    def allows(self, action: str, *, typing: bool) -> bool:
        """Whether an action's key acts now: letter keys (`list_keys`) only in list mode.

        Subclasses add their own rules; the command palette asks with `typing=False`, so it
        offers every action whatever has the focus.
        """
        return not (typing and action in self._letter_actions())

    @classmethod
    @functools.cache
    def _letter_actions(cls) -> frozenset[str]:
        """The actions bound to priority letter keys (fixed per class: asked on every key)."""
        return frozenset(
            {
                b.action.split("(", 1)[0]
                for b in cls.BINDINGS
                if isinstance(b, Binding) and b.priority and is_letter_key(b.key)
            }
        )

    def _target_id(self) -> str | None:
        found = self.target()
        if found is None:
            self.notify("Select a document first.", severity="warning")
            return None
        return found[0]

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            self.app.post_message(EngineFailed(event.worker.error))

    # -- copying and editing ---------------------------------------------------------------
    def action_copy_id(self) -> None:
        """Copy the document id to the clipboard."""
        doc_id = self._target_id()
        if doc_id is not None:
            self.app.copy_to_clipboard(doc_id)
            self.notify(f"copied {doc_id}", markup=False)

    def action_copy_json(self) -> None:
        """Copy the selected hit or document as JSON."""
        found = self.target()
        if found is None:
            self.notify("Select a document first.", severity="warning")
            return
        self.app.copy_to_clipboard(json.dumps(found[1], ensure_ascii=False))
        self.notify(f"copied {found[0]} as JSON", markup=False)

    def action_edit(self) -> None:
        """Open the document's text in $EDITOR; a changed text is saved as a new version."""
        doc_id = self._target_id()
        if doc_id is not None:
            self.load_item(doc_id, "editor")

    def action_edit_tags(self) -> None:
        """Edit the document's tags."""
        doc_id = self._target_id()
        if doc_id is not None:
            self.load_item(doc_id, "tags")

    @work(thread=True, exclusive=True, group="item", exit_on_error=False)
    def load_item(self, doc_id: str, purpose: str, offset: int | None = None) -> None:
        """Read a document version in a worker; answers with ItemLoaded."""
        self.post_message(ItemLoaded(self.wb.get(doc_id, offset), purpose))

    def on_item_loaded(self, message: ItemLoaded) -> None:
        """Continue the action the item was loaded for."""
        item = message.item
        if message.purpose == "tags":
            current = tag_pairs(item.tags)
            self.app.push_screen(
                TagsModal(item.id, current), lambda edit: self._tags_entered(item.id, edit)
            )
        elif message.purpose == "editor":
            self._open_editor(item)
        else:
            self.item_loaded(message)

    def item_loaded(self, message: ItemLoaded) -> None:
        """Subclasses: an item loaded for their own purposes (previews, versions)."""

    def _open_editor(self, item: Item) -> None:
        original = item.text if item.text is not None else item.summary
        editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
        fd, name = tempfile.mkstemp(prefix="keepui-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(original)
            try:
                with self.app.suspend():
                    subprocess.run([*editor, name], check=False)
            except SuspendNotSupported:  # headless (tests): the editor needs no terminal
                subprocess.run(
                    [*editor, name],
                    check=False,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            edited = path.read_text(encoding="utf-8")
        except OSError as exc:
            self.app.post_message(
                EngineFailed(
                    UsageError(
                        f"cannot run the editor {' '.join(editor)!r}: {exc}. Set $EDITOR to an "
                        "editor installed here (e.g. export EDITOR=nano).",
                        "Editor failed",
                    )
                )
            )
            return
        finally:
            path.unlink(missing_ok=True)
        if item.text is None or edited == original or not edited.strip():
            self.notify("No change saved.")
            return
        self.write(lambda: _put_done(self.wb.put(edited, id=item.id)))

    # -- writing ------------------------------------------------------------------------------
    @work(thread=True, group="write", exit_on_error=False)
    def write(self, op: Callable[[], WriteDone]) -> None:
        """Run a write in a worker; answers with the WriteDone it returns."""
        self.post_message(op())

    def on_write_done(self, message: WriteDone) -> None:
        """Say what happened and let the app refresh what changed (counts and the queue)."""
        if message.action == "ingested":
            self.set_activity("")
        severity: SeverityLevel = "warning" if message.severity == "warning" else "information"
        timeout = 8 if severity == "warning" else 4
        # ids, file names and errors are data, never markup
        self.notify(message.text, severity=severity, timeout=timeout, markup=False)
        self.app.call_later(self.app.run_action, "poll")
        self.after_write(message)

    def after_write(self, message: WriteDone) -> None:
        """Subclasses: react to a finished write."""

    def action_add_note(self) -> None:
        """Write a new note."""
        self.app.push_screen(NoteModal(), self._note_entered)

    def _note_entered(self, note: object) -> None:
        if isinstance(note, NoteInput):
            self.write(lambda: _put_done(self.wb.put(note.text, id=note.id, tags=note.tags)))

    def action_add_file(self) -> None:
        """Add a file of any format, a folder, or an http(s) URL."""
        self.app.push_screen(FileModal(), self._file_entered)

    def _file_entered(self, entry: object) -> None:
        if isinstance(entry, FileInput):
            target = add_target(entry.path)

            def progress(done: int, total: int, source: str) -> None:
                self.app.call_from_thread(self.set_activity, f"adding files {done}/{total}…")

            self.write(lambda: ingest_done(self.wb, target, entry.tags, progress))

    def set_activity(self, text: str) -> None:
        """Say in the status bar what is running (empty: nothing)."""
        for bar in self.query(StatusBar):
            bar.activity = text

    def _tags_entered(self, doc_id: str, edit: object) -> None:
        if isinstance(edit, TagEdit):
            self.write(lambda: _put_done(self.wb.tag(doc_id, tags=edit.set, remove=edit.remove)))

    def action_delete(self) -> None:
        """Revert the document to its previous version (delete it when it has none)."""
        self._confirm_delete(purge=False)

    def action_purge(self) -> None:
        """Remove the document and its whole history."""
        self._confirm_delete(purge=True)

    def _confirm_delete(self, *, purge: bool) -> None:
        doc_id = self._target_id()
        if doc_id is None:
            return
        if purge:
            title, question = f"Purge {doc_id}?", "It and every version of it will be removed."
        else:
            title = f"Delete {doc_id}?"
            question = "Its latest version is removed; the previous one (if any) comes back."

        def answered(yes: bool | None) -> None:
            if yes:
                self.write(lambda: _delete_done(self.wb.delete(doc_id, purge=purge)))

        label = "Purge" if purge else "Delete"
        self.app.push_screen(ConfirmModal(title, question, label), answered)
