"""Modal forms for writing from the TUI: a new note, a file / folder / URL, a document's tags."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, TextArea

from keepui.tui.screens.folder_picker import FolderPicker
from keepui.tui.widgets.keys import focus_now
from keepui.tui.widgets.path_input import PathInput


def split_tags(text: str) -> list[str]:
    """`topic=db "title=two words"` -> ["topic=db", "title=two words"].

    Raises:
        ValueError: A quote is not closed.
    """
    return shlex.split(text)


def join_tags(tags: list[str]) -> str:
    """The inverse of `split_tags`."""
    return " ".join(shlex.quote(t) for t in tags)


MATCHES_SHOWN = 8
"""Names listed when a Tab in the path box fits several."""


@dataclass
class NoteInput:
    """A note to put."""

    text: str
    """Its text."""
    id: str | None = None
    """Its id (None: content-addressed)."""
    tags: list[str] = field(default_factory=list)
    """`key=value` tags."""


@dataclass
class FileInput:
    """A file of any format, a folder or an http(s) URL to add."""

    path: str
    """Its path (`~` allowed) or URL."""
    tags: list[str] = field(default_factory=list)
    """`key=value` tags."""


@dataclass
class TagEdit:
    """The tags to set and the keys to remove."""

    set: list[str]
    """`key=value` tags to set (repeat a key for a list)."""
    remove: list[str]
    """Keys to remove."""


SINGLE_LINE_KEYS = "Enter saves · Tab next field · Esc cancels"
MULTI_LINE_KEYS = "Ctrl+S saves · Tab next field · Esc cancels"


class FormModal(ModalScreen[object]):
    """Shared keys: Enter (in a one-line field) or Ctrl+S saves, Escape cancels, Tab moves.

    Tab and Shift+Tab are priority bindings that move the focus at once, so letters typed
    right after them land in the next field, not the one just left. In a path box Tab first
    completes the path, like a shell.
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
        Binding("tab", "next_field(1)", "Next field", show=False, priority=True),
        Binding("shift+tab", "next_field(-1)", "Previous field", show=False, priority=True),
    ]
    KEYS = SINGLE_LINE_KEYS
    """The keys line under the buttons (multi-line forms name Ctrl+S)."""

    def buttons(self) -> ComposeResult:
        """The error line, the Save / Cancel buttons and the keys line."""
        yield Label("", id="form-error", classes="form-error")
        with Horizontal(classes="modal-buttons"):
            yield Button("Save", id="form-save", variant="primary")
            yield Button("Cancel", id="form-cancel")
        yield Label(self.KEYS, classes="form-keys")

    def fail(self, message: str) -> None:
        """Show what is wrong with the input."""
        self.query_one("#form-error", Label).update(message)

    def tags(self, widget_id: str) -> list[str] | None:
        """The tags typed in an input, or None (with the error shown) when unparsable."""
        try:
            return split_tags(self.query_one(widget_id, Input).value)
        except ValueError as exc:
            self.fail(f"tags: {exc}")
            return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Tab in a path box is the box's own (it completes, in the order keys were typed)."""
        if action == "next_field" and parameters == (1,):
            return not isinstance(self.focused, PathInput)
        return True

    def action_next_field(self, step: int) -> None:
        """Move to the next (or previous) field at once."""
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    @on(PathInput.Completed)
    def _completed(self, event: PathInput.Completed) -> None:
        done = event.completion
        self.show_matches(done.matches if not done.changed and len(done.matches) > 1 else [])

    def show_matches(self, matches: list[str]) -> None:
        """Several names fit the typed path: list them (on the error line)."""
        if matches:
            shown = "  ".join(matches[:MATCHES_SHOWN])
            more = (
                f"  … {len(matches) - MATCHES_SHOWN} more" if len(matches) > MATCHES_SHOWN else ""
            )
            self.query_one("#form-error", Label).update(Content(shown + more))
        else:
            self.fail("")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#form-save")
    def _save(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#form-cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)

    def action_save(self) -> None:
        """Validate and close with the input (subclasses)."""
        raise NotImplementedError


class NoteModal(FormModal):
    """Write a new note: text, an optional id, tags (Enter in the id or tags saves too)."""

    KEYS = MULTI_LINE_KEYS

    def compose(self) -> ComposeResult:
        """Text area, id and tags inputs, buttons."""
        with Vertical(classes="modal-box form-box", id="note-box"):
            yield Label("New note", classes="modal-title")
            yield TextArea(id="note-text")
            yield Input(placeholder="id (optional)", id="note-id")
            yield Input(placeholder="tags: topic=db status=draft", id="note-tags")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the text."""
        focus_now(self.query_one("#note-text", TextArea))

    def action_save(self) -> None:
        """Close with a NoteInput (refuses empty text)."""
        text = self.query_one("#note-text", TextArea).text
        if not text.strip():
            self.fail("the note is empty: type some text first.")
            return
        tags = self.tags("#note-tags")
        if tags is None:
            return
        doc_id = self.query_one("#note-id", Input).value.strip() or None
        self.dismiss(NoteInput(text, doc_id, tags))


class FileModal(FormModal):
    """Add a file of any format, a whole folder, or an http(s) URL, with tags.

    Tab completes the path; Ctrl+O opens a folder picker.
    """

    BINDINGS = [Binding("ctrl+o", "browse", "Browse")]
    KEYS = "Enter saves · Tab completes · Ctrl+O browses · Esc cancels"

    def compose(self) -> ComposeResult:
        """Path and tags inputs, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label("Add a file, folder or URL (any format)", classes="modal-title")
            yield PathInput(
                placeholder="e.g. ~/notes/meeting.pdf, ~/papers/ or https://…", id="file-path"
            )
            yield Input(placeholder="tags: topic=db", id="file-tags")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the path."""
        focus_now(self.query_one("#file-path", Input))

    def action_browse(self) -> None:
        """Pick the file or folder in a tree (it opens where the typed path points)."""
        box = self.query_one("#file-path", PathInput)

        def picked(path: str | None) -> None:
            if path:
                box.value = path
                box.cursor_position = len(path)
            focus_now(box)

        self.app.push_screen(FolderPicker(box.value), picked)

    def action_save(self) -> None:
        """Close with a FileInput (refuses an empty path)."""
        path = self.query_one("#file-path", Input).value.strip()
        if not path:
            self.fail("give the path of a file or folder, or an http(s) URL.")
            return
        tags = self.tags("#file-tags")
        if tags is not None:
            self.dismiss(FileInput(path, tags))


class TagsModal(FormModal):
    """Edit a document's user tags as `key=value` words.

    Args:
        doc_id: The document.
        tags: Its current `key=value` tags.
    """

    def __init__(self, doc_id: str, tags: list[str]) -> None:
        super().__init__(classes="modal")
        self.doc_id = doc_id
        self.current = list(tags)

    def compose(self) -> ComposeResult:
        """One input with the current tags, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label(f"Tags of {self.doc_id}", classes="modal-title")
            yield Input(join_tags(self.current), id="tags-input")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the input."""
        focus_now(self.query_one("#tags-input", Input))

    def action_save(self) -> None:
        """Close with a TagEdit: every typed tag is set, keys no longer typed are removed."""
        tags = self.tags("#tags-input")
        if tags is None:
            return
        bad = [t for t in tags if "=" not in t]
        if bad:
            self.fail(f"write tags as key=value: {', '.join(bad)}")
            return
        keys = {t.split("=", 1)[0].lower() for t in tags}
        gone = sorted({t.split("=", 1)[0] for t in self.current} - keys)
        self.dismiss(TagEdit(tags, gone) if tags or gone else None)
