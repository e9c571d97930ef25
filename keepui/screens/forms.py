"""Modal forms for writing from the TUI: a new note, a file / folder / URL, a document's tags."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, TextArea


def split_tags(text: str) -> list[str]:
    """`topic=db "title=two words"` -> ["topic=db", "title=two words"].

    Raises:
        ValueError: A quote is not closed.
    """
    return shlex.split(text)


def join_tags(tags: list[str]) -> str:
    """The inverse of `split_tags`."""
    return " ".join(shlex.quote(t) for t in tags)


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


class _Form(ModalScreen[object]):
    """Shared keys: Ctrl+S saves, Escape cancels; an error line under the fields."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def buttons(self) -> ComposeResult:
        """The error line and the Save / Cancel buttons."""
        yield Label("", id="form-error", classes="form-error")
        with Horizontal(classes="modal-buttons"):
            yield Button("Save", id="form-save", variant="primary")
            yield Button("Cancel", id="form-cancel")

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


class NoteModal(_Form):
    """Write a new note: text, an optional id, tags."""

    def compose(self) -> ComposeResult:
        """Text area, id and tags inputs, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label("New note", classes="modal-title")
            yield TextArea(id="note-text")
            yield Input(placeholder="id (optional)", id="note-id")
            yield Input(placeholder="tags: topic=db status=draft", id="note-tags")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the text."""
        self.query_one("#note-text", TextArea).focus()

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


class FileModal(_Form):
    """Add a file of any format, a whole folder, or an http(s) URL, with tags."""

    def compose(self) -> ComposeResult:
        """Path and tags inputs, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label("Add a file, folder or URL (any format)", classes="modal-title")
            yield Input(
                placeholder="e.g. ~/notes/meeting.pdf, ~/papers/ or https://…", id="file-path"
            )
            yield Input(placeholder="tags: topic=db", id="file-tags")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the path."""
        self.query_one("#file-path", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        """Close with a FileInput (refuses an empty path)."""
        path = self.query_one("#file-path", Input).value.strip()
        if not path:
            self.fail("give the path of a file or folder, or an http(s) URL.")
            return
        tags = self.tags("#file-tags")
        if tags is not None:
            self.dismiss(FileInput(path, tags))


class TagsModal(_Form):
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
        self.query_one("#tags-input", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

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
