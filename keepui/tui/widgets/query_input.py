"""QueryInput: the search bar's text box: a finished query is replaced by the next one typed,
↑/↓ recall earlier queries, and a keystroke costs the same at any length of query."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Input
from textual.widgets.input import Selection

LONG = 256
"""Characters from which a plain value is drawn by its visible window only."""


class QueryInput(Input):
    """The query box.

    - Enter runs the query and selects it: typing starts the next query, `→`/`End` go back to
      refining it (the cursor at its end).
    - `/` in an empty or wholly selected box is the search key, not a letter (a habit from
      list mode, and what a fast typist sends after Enter); anywhere else it is a letter.
    - `↑` recalls earlier queries (newest first) for editing, the cursor at the end; `↓` comes
      back towards the text being typed, and from there posts `QueryInput.Leave` (the screen
      moves into the results).
    - A plain value (ASCII, no tabs) is measured by its length and drawn by its visible window,
      so typing the 20,000th character costs what typing the first did.
    """

    BINDINGS = [
        Binding("up", "older", "Older query", show=False),
        Binding("down", "newer", "Newer query", show=False),
    ]
    """For the footer and help; the keys themselves act in `_on_key`."""

    @dataclass
    class Leave(Message):
        """`↓` with nothing newer to recall: the user moves on to the results."""

        box: QueryInput
        """The box left."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.recall: Callable[[], list[str]] = list
        """Earlier queries, newest first (set by the screen that keeps the history)."""
        self._at = -1
        self._draft = ""
        self._on_the_way: list[str] = []

    # -- recall ---------------------------------------------------------------------------------
    @property
    def browsing(self) -> bool:
        """Whether the box shows a recalled query (so `↓` recalls a newer one)."""
        return self._at >= 0

    def put(self, text: str) -> None:
        """Show `text` for editing: the cursor at its end, nothing selected."""
        self.value = text
        self.selection = Selection.cursor(len(text))

    def action_older(self) -> None:
        """`↑`: the query before the one shown."""
        earlier = [q for q in self.recall() if q]
        if self._at + 1 >= len(earlier):
            return
        if self._at < 0:
            self._draft = self.value
        self._at += 1
        if earlier[self._at] == self.value and self._at + 1 < len(earlier):
            self._at += 1  # the query just run is already in the box
        self.put(earlier[self._at])

    def action_newer(self) -> None:
        """`↓`: the query after the one shown, then the text being typed, then the results."""
        if self._at < 0:
            self.post_message(self.Leave(self))
            return
        self._at -= 1
        earlier = [q for q in self.recall() if q]
        self.put(earlier[self._at] if 0 <= self._at < len(earlier) else self._draft)

    # -- submitting and `/` ---------------------------------------------------------------------
    async def action_submit(self) -> None:
        """Enter: run the query, then select it (the next letter typed starts a new one)."""
        await super().action_submit()
        self._at, self._draft = -1, ""
        self.selection = Selection(0, len(self.value))

    @property
    def wholly_selected(self) -> bool:
        """Whether the box is empty or all of its text is selected."""
        start, end = sorted(self.selection)
        return not self.value or (start == 0 and end == len(self.value))

    def post_message(self, message: Message) -> bool:
        """Queue a message; a key is counted as on its way until `_on_key` has handled it."""
        if isinstance(message, events.Key):
            self._on_the_way.append(message.key)
        return super().post_message(message)

    @property
    def keys_on_the_way(self) -> set[str]:
        """Keys sent to the box that it has not finished handling (typed fast, they wait)."""
        return set(self._on_the_way)

    async def _on_key(self, event: events.Key) -> None:
        try:
            # Enter, ↑ and ↓ act here, in the order keys were typed (as bindings they would
            # act only once the key had bubbled to the app, after the letters typed behind it)
            if event.key in ("enter", "up", "down") or (
                event.character == "/" and self.wholly_selected
            ):
                event.stop()
                event.prevent_default()
                if event.key == "enter":
                    await self.action_submit()
                elif event.key == "up":
                    self.action_older()
                elif event.key == "down":
                    self.action_newer()
                return
            if not event.is_printable and await self._own_binding(event):
                return
            await super()._on_key(event)
        finally:
            if event.key in self._on_the_way:
                self._on_the_way.remove(event.key)

    async def _own_binding(self, event: events.Key) -> bool:
        """Run the box's own key (End, Home, ←, Backspace …) now, in the order typed: as a
        binding it would act once the key had bubbled to the app, after the letters typed
        behind it (`/`, End, ` more` sent at once would type ` more` over the selection)."""
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if binding.priority:
                continue
            event.stop()
            event.prevent_default()
            await self.run_action(binding.action)
            return True
        return False

    # -- constant cost per keystroke ------------------------------------------------------------
    def _plain(self) -> bool:
        value = self.value
        return value.isascii() and "\t" not in value  # C speed: microseconds at 20,000 chars

    def _position_to_cell(self, position: int) -> int:
        if self._plain():
            return position
        return super()._position_to_cell(position)

    @property
    def content_width(self) -> int:
        """The value's width in cells, plus one for the cursor."""
        if self.value and self._plain():
            return len(self.value) + 1
        return super().content_width

    def render_line(self, y: int) -> Strip:
        """Draw a long plain value by its visible window (Input draws all of it, then crops)."""
        value = self.value
        if y != 0 or len(value) < LONG or not self._plain() or self.password:
            return super().render_line(y)
        width = self.scrollable_content_region.width
        start = int(self.scroll_offset.x)
        end = min(start + width + 1, len(value))
        window = Text(value[start:end], no_wrap=True, overflow="ignore", end="")
        if self.has_focus:
            low, high = sorted(self.selection)
            if low != high:
                style = self.get_component_rich_style("input--selection")
                window.stylize_before(style, max(low - start, 0), max(high - start, 0))
            if self._cursor_visible:
                cursor = self.cursor_position - start
                if self.cursor_at_end:
                    window.pad_right(1)
                window.stylize(self.get_component_rich_style("input--cursor"), cursor, cursor + 1)
        options = self.app.console_options.update_width(width + 1)
        strip = Strip(list(self.app.console.render(window, options)))
        return strip.crop(0, width + 1).extend_cell_length(width + 1).apply_style(self.rich_style)
