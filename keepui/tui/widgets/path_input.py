"""PathInput: a path box that completes on Tab like a shell (`~` allowed, folders end in `/`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import Input

MAX_LISTED = 2000
"""Entries of a folder read for completion, at most (a huge folder costs no more)."""


@dataclass
class Completion:
    """What one Tab did."""

    changed: bool
    """The box's text grew (one match, or the matches' common start)."""
    matches: list[str]
    """Names that fit what is typed (folders end in `/`), sorted."""


def split_typed(text: str) -> tuple[str, str]:
    """(folder part as typed, start of the name): `~/no` -> (`~/`, `no`)."""
    head, _, tail = text.rpartition("/")
    return (head + "/" if head or text.startswith("/") else ""), tail


def matching_names(text: str, limit: int = MAX_LISTED) -> list[str]:
    """Names in the typed folder that start with the typed name (folders end in `/`).

    Hidden names only when the typed name starts with a dot; case-sensitive first, and
    case-insensitive when nothing matches that way.
    """
    folder, start = split_typed(text)
    where = Path(folder or ".").expanduser()
    names: list[str] = []
    try:
        with os.scandir(where) as entries:
            for i, entry in enumerate(entries):
                if i >= limit:
                    break
                if entry.name.startswith(".") and not start.startswith("."):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                names.append(entry.name + ("/" if is_dir else ""))
    except OSError:
        return []
    found = [n for n in names if n.startswith(start)]
    if not found:
        found = [n for n in names if n.lower().startswith(start.lower())]
    return sorted(found)


def common_start(names: list[str]) -> str:
    """The longest start all names share."""
    return os.path.commonprefix(names) if names else ""


class PathInput(Input):
    """A path (or URL) box; Tab extends it like a shell does, or moves on when nothing fits.

    Tab is handled here, in the order the keys were typed (the letters before it are in the
    box when it completes). When it moves the focus on, keys typed after it that were already
    on their way here are handed to the field that now has the focus.
    """

    @dataclass
    class Completed(Message):
        """A Tab found names that fit (several: the form lists them)."""

        input: PathInput
        """The box."""
        completion: Completion
        """What the Tab did."""

    async def _on_key(self, event: events.Key) -> None:
        focused = self.screen.focused  # `has_focus` follows only once the Blur event is handled
        if focused is not None and focused is not self:
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        if event.key == "tab":
            event.stop()
            event.prevent_default()
            done = self.complete()
            self.post_message(self.Completed(self, done))
            if not done.changed and len(done.matches) <= 1:
                self.screen.focus_next()
            return
        await super()._on_key(event)

    def complete(self) -> Completion:
        """Complete the typed path: one match is filled in, several extend to their common start.

        URLs are left alone. The cursor goes to the end.
        """
        text = self.value
        if text.startswith(("http://", "https://", "file://")):
            return Completion(False, [])
        folder, start = split_typed(text)
        matches = matching_names(text)
        if not matches:
            return Completion(False, [])
        grow = matches[0] if len(matches) == 1 else common_start(matches)
        if len(grow) > len(start) or (len(matches) == 1 and grow != start):
            self.value = folder + grow
            self.cursor_position = len(self.value)
            return Completion(True, matches)
        return Completion(False, matches)
