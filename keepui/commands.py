"""Command palette (Ctrl+P): every bound action of the screen, the queue, themes, past searches."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from keepui.theming import THEMES

Command = tuple[str, str, Callable[[], Any]]


class KeepuiCommands(Provider):
    """Offers the calling screen's key-bound actions, the keepui themes and past searches.

    A binding's tooltip, when it has one, names its command (`Run flow: … on the current
    query` rather than the footer's `Flow`); a screen's `palette_commands()` adds its own.
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
        show_queue = getattr(self.app, "action_show_queue", None)
        if "show_queue" not in seen and callable(show_queue):
            # a focused input consumes `p`, which hides the binding: offer it anyway
            out.append(("Show queue", "key: p · failures, retry, purge", show_queue))
        own = getattr(self.screen, "palette_commands", None)
        if callable(own):
            out.extend(own())
        for theme in THEMES:
            switch = partial(setattr, self.app, "theme", theme.name)
            out.append((f"Theme: {theme.name}", "switch colours", switch))
        rerun = getattr(self.screen, "rerun", None)
        if callable(rerun):
            for record in getattr(self.screen, "history", [])[:50]:
                label = f"Re-run: {record.q.query}"
                about = f"search #{record.id}, {len(record.ids)} hits"
                out.append((label, about, partial(rerun, record)))
        return out

    async def discover(self) -> Hits:
        """Everything, unfiltered."""
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Commands whose names match the query, best first."""
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
