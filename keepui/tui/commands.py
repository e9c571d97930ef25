"""Command palette (Ctrl+P): every bound action of the screen, the queue, themes, past searches."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from textual.actions import parse as parse_action
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape
from textual.screen import Screen
from textual.visual import Style

from keepui.tui.theming import THEMES
from keepui.tui.widgets.format import one_line

Command = tuple[str, str, Callable[[], Any]]

LABEL_MAX = 72
"""Characters of a command's name that are shown and matched (a past query can be 2,000)."""
QUERY_MAX = 64
"""Characters of what is typed in the palette that are matched."""
HISTORY_COMMANDS = 50
"""Past searches offered as `Re-run: …` commands."""
MAX_COMMANDS = 300
"""Commands matched per key press, at most."""


def clamp(text: str, width: int = LABEL_MAX) -> str:
    """One line of at most `width` characters (see `format.one_line`)."""
    return one_line(text, width)


def _call(screen: Screen[Any], action: str) -> None:
    """Run a screen's action whatever its key is doing now (a letter key is off while a text
    box has the focus, yet the palette offers the action)."""
    _, name, params = parse_action(action)
    method = getattr(screen, f"action_{name}", None)
    if callable(method):
        screen.call_later(method, *params)


class BoundedMatcher:
    """Fuzzy matching that takes time linear in the label, whatever is typed or stored.

    Textual's matcher enumerates every way the typed letters can be found in a label, which
    grows exponentially with the label's length: a 2,000-character past query made the
    palette spin at 100% CPU and eat memory. Here a match is a substring (best) or the
    leftmost subsequence, scored by how many letters start words and how few runs there are.

    Args:
        query: What the user typed.
        match_style: How matched letters are highlighted.
    """

    def __init__(self, query: str, match_style: Style | None = None) -> None:
        self.query = clamp(query, QUERY_MAX).lower()
        self.match_style = match_style or Style(reverse=True)

    def positions(self, candidate: str) -> list[int]:
        """Where the query's letters are found in the candidate (empty: no match)."""
        query, text = self.query, candidate.lower()
        if not query:
            return []
        at = text.find(query)
        if at >= 0:
            return list(range(at, at + len(query)))
        found: list[int] = []
        start = 0
        for letter in query:
            if letter == " ":
                continue
            start = text.find(letter, start)
            if start < 0:
                return []
            found.append(start)
            start += 1
        return found

    def match(self, candidate: str) -> float:
        """A score in (0, 1] for a match, 0 for none."""
        offsets = self.positions(candidate)
        if not offsets:
            return 0.0
        text = candidate.lower()
        if text.startswith(self.query):
            return 1.0
        starts = sum(1 for i in offsets if i == 0 or not text[i - 1].isalnum())
        runs = 1 + sum(1 for a, b in zip(offsets, offsets[1:], strict=False) if b != a + 1)
        contiguous = offsets[-1] - offsets[0] + 1 == len(offsets)
        base = 0.8 if contiguous else 0.5
        return min(0.99, base + 0.1 * starts / len(offsets) + 0.1 / runs)

    def highlight(self, candidate: str) -> Content:
        """The candidate (plain text, never markup) with the matched letters styled."""
        content = Content(candidate)
        for offset in self.positions(candidate):
            if not candidate[offset].isspace():
                content = content.stylize(self.match_style, offset, offset + 1)
        return content


class KeepuiCommands(Provider):
    """Offers the calling screen's key-bound actions, the keepui themes and past searches.

    A binding's tooltip, when it has one, names its command (`Run flow: … on the current
    query` rather than the footer's `Flow`); a screen's `palette_commands()` adds its own.
    The screen's own keys are offered even while a text box has the focus (it would take
    the letter), so `Note`, `File`, `Tags` and `Delete` are there on the start screen too.
    """

    def commands(self) -> list[Command]:
        """(name, help, callback) for everything reachable from the calling screen."""
        out: list[Command] = []
        seen: set[str] = set()
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if not binding.description or binding.action in seen or binding.system:
                continue
            if not binding.show and not isinstance(active.node, (Screen, App)):
                continue  # a list's own j/k/g/G: not worth a command
            seen.add(binding.action)
            run = partial(self.app.run_action, binding.action, active.node)
            name = binding.tooltip or binding.description
            out.append((name, f"key: {binding.key_display or key}", run))
        out.extend(self._screen_keys(seen))
        show_queue = getattr(self.app, "action_show_queue", None)
        if "show_queue" not in seen and callable(show_queue):
            out.append(("Show queue", "key: p · failures, retry, purge", show_queue))
        own = getattr(self.screen, "palette_commands", None)
        if callable(own):
            out.extend(own())
        for theme in THEMES:
            switch = partial(setattr, self.app, "theme", theme.name)
            out.append((f"Theme: {theme.name}", "switch colours", switch))
        rerun = getattr(self.screen, "rerun", None)
        if callable(rerun):
            for record in getattr(self.screen, "history", [])[:HISTORY_COMMANDS]:
                label = clamp(f"Re-run: {record.q.query}")
                about = f"search #{record.id}, {len(record.ids)} hits"
                out.append((label, about, partial(rerun, record)))
        return [(clamp(name), clamp(about, 120), run) for name, about, run in out][:MAX_COMMANDS]

    def _screen_keys(self, seen: set[str]) -> Iterable[Command]:
        """The screen's own bound actions that a focused text box hides from the footer."""
        screen = self.screen
        for binding in screen.BINDINGS:
            if not isinstance(binding, Binding):
                continue
            action = binding.action
            if not binding.description or action in seen or binding.system:
                continue
            name_only = action.split("(", 1)[0]
            allows = getattr(screen, "allows", None)  # asked as in list mode: every action
            if not (
                allows(name_only, typing=False)
                if callable(allows)
                else screen.check_action(name_only, ())
            ):
                continue
            seen.add(action)
            name = binding.tooltip or binding.description
            yield name, f"key: {binding.key_display or binding.key}", partial(_call, screen, action)

    async def discover(self) -> Hits:
        """Everything, unfiltered."""
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(Content(name), callback, text=name, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        """Commands whose names match the query, best first."""
        matcher = BoundedMatcher(query, self.match_style)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(name), callback, text=name, help=escape(help_text)
                )
