"""Vim-style list keys (j/k, g/G) shared by the list widgets."""

from __future__ import annotations

from textual.binding import Binding, BindingType

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
