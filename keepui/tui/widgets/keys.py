"""Vim-style list keys (j/k, g/G) shared by the list widgets, and moving the focus at once."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType
from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from textual.widget import Widget

TABLE_KEYS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "scroll_top", "First", show=False),
    Binding("G", "scroll_bottom", "Last", show=False),
]
"""For DataTable subclasses."""

OPTION_KEYS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "first", "First", show=False),
    Binding("G", "last", "Last", show=False),
]
"""For OptionList subclasses."""

TREE_KEYS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "first_line", "First", show=False),
    Binding("G", "last_line", "Last", show=False),
]
"""For Tree subclasses (which implement first_line / last_line)."""

SCROLL_KEYS: list[BindingType] = [
    Binding("j", "scroll_down", "Down", show=False),
    Binding("k", "scroll_up", "Up", show=False),
    Binding("g", "scroll_home", "Top", show=False),
    Binding("G", "scroll_end", "Bottom", show=False),
]
"""For scrolling views."""


def focus_now(widget: Widget | None) -> None:
    """Give a widget the focus at once.

    `Widget.focus()` waits for the message queue, so keys typed before it runs (a burst from
    tmux or a fast typist: `/` then the query) still go to the old widget. Key bindings that
    move the focus call this instead, from a priority binding, so the next key lands right.
    """
    if widget is not None and widget.is_attached:
        widget.screen.set_focus(widget)


def is_typing(widget: Widget | None) -> bool:
    """Whether a widget takes typed letters (input mode) rather than keys (list mode)."""
    return isinstance(widget, Input | TextArea)


_LETTER_NAMES = {"left_square_bracket", "right_square_bracket", "slash", "space"}


def is_letter_key(key: str) -> bool:
    """Whether a key types a character in a text box (so it acts only in list mode)."""
    return len(key) == 1 or key in _LETTER_NAMES


def list_keys(bindings: list[BindingType]) -> list[BindingType]:
    """A screen's bindings with its letter keys made priority bindings.

    A priority binding is decided when the key arrives, in the order keys were typed; a plain
    one only once the focused widget has passed the key on, so in a burst (`f` then a path,
    typed fast or sent by tmux) the keys after it overtook it. The screen's `check_action`
    turns them off while a text box has the focus (input mode), where letters type.
    """
    return [
        replace(b, priority=True) if isinstance(b, Binding) and is_letter_key(b.key) else b
        for b in bindings
    ]
