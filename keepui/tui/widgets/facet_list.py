"""FacetList: tag keys with their values and counts; Space selects values, Enter applies them."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from keepui.tui.widgets.facet_filter import Selection
from keepui.tui.widgets.format import one_line
from keepui.tui.widgets.keys import OPTION_KEYS

VALUE_CHARS = 40
"""Characters of a tag value shown (longer ones end in `…`)."""


class FacetList(OptionList):
    """One heading a tag key, then its values, most common first, each with its count.

    `Space` selects or drops the highlighted value; `Enter` posts `Applied` with the
    selection (or, when nothing is selected, the highlighted value alone).
    """

    BINDINGS = [
        *OPTION_KEYS,
        Binding("space", "toggle_value", "Select", key_display="Space"),
        Binding("enter", "select", "Show documents"),
    ]

    @dataclass
    class Changed(Message):
        """The selection changed."""

        selection: Selection
        """KEY -> chosen values, in the order keys are listed."""

    @dataclass
    class Applied(Message):
        """The user asked for the documents carrying the selection."""

        selection: Selection
        """KEY -> chosen values (never empty)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.facets: dict[str, dict[str, int]] = {}
        self.rows: list[tuple[str, str | None]] = []
        """(key, value) of each option; value None for a key's heading."""
        self.chosen: dict[str, list[str]] = {}

    def set_facets(self, facets: dict[str, dict[str, int]]) -> None:
        """List these keys and values (a selection of values no longer listed is dropped)."""
        self.facets = facets
        self.chosen = {
            k: [v for v in vs if v in facets.get(k, {})] for k, vs in self.chosen.items()
        }
        self.chosen = {k: vs for k, vs in self.chosen.items() if vs}
        self.rows = []
        options: list[Option] = []
        width = self._width()
        for key in sorted(facets):
            values = sorted(facets[key].items(), key=lambda kv: (-kv[1], kv[0]))
            self.rows.append((key, None))
            options.append(Option(Content.styled(key, "bold"), disabled=True))
            for value, count in values:
                self.rows.append((key, value))
                options.append(Option(self._prompt(key, value, count, width)))
        self.clear_options()
        self.add_options(options)
        first = next((i for i, (_, v) in enumerate(self.rows) if v is not None), None)
        self.highlighted = first

    def _width(self) -> int:
        """The values' column width: the longest value shown (counts line up after it)."""
        lengths = [len(v) for values in self.facets.values() for v in values]
        return min(max(lengths, default=0), VALUE_CHARS)

    def _prompt(self, key: str, value: str, count: int, width: int) -> Content:
        on = value in self.chosen.get(key, [])
        mark = Content.styled("[x]", "bold $success") if on else Content("[ ]")
        shown = one_line(value, VALUE_CHARS).ljust(width)
        return Content.assemble("  ", mark, f" {shown}  ", Content.styled(f"{count:>5}", "dim"))

    @property
    def selection(self) -> Selection:
        """KEY -> chosen values, keys in the order they are listed."""
        return {k: list(self.chosen[k]) for k in sorted(self.chosen)}

    @property
    def current(self) -> tuple[str, str] | None:
        """(key, value) under the cursor (None on a heading or an empty list)."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.rows):
            return None
        key, value = self.rows[index]
        return (key, value) if value is not None else None

    def action_toggle_value(self) -> None:
        """Select the highlighted value, or drop it when it is selected."""
        found = self.current
        index = self.highlighted
        if found is None or index is None:
            return
        key, value = found
        values = self.chosen.setdefault(key, [])
        if value in values:
            values.remove(value)
        else:
            values.append(value)
        if not values:
            del self.chosen[key]
        prompt = self._prompt(key, value, self.facets[key][value], self._width())
        self.replace_option_prompt_at_index(index, prompt)
        self.post_message(self.Changed(self.selection))

    def action_select(self) -> None:
        """Apply the selection (or the highlighted value when nothing is selected)."""
        selection = self.selection
        if not selection and self.current is not None:
            key, value = self.current
            selection = {key: [value]}
        if selection:
            self.post_message(self.Applied(selection))
