"""KeepuiFooter: Textual's Footer with the input/list mode first, and without its widget leak."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer, Label

from keepui.tui.widgets.keys import is_typing


def mode_name(typing: bool) -> str:
    """`INPUT` while a text box has the focus (letters type), else `LIST` (letters are keys)."""
    return "INPUT" if typing else "LIST"


class KeepuiFooter(Footer):
    """The key bar, led by the mode: `INPUT` (typing) or `LIST` (keys act), as lazygit and k9s do.

    Every recompose (each focus or binding change) binds its new FooterKeys to this long-lived
    Footer's `compact`, and Textual prunes the entries of removed keys only when `compact`
    changes, so each search leaked a few dozen widgets, and garbage collection pauses grew with
    them (Textualize/textual#6666). They are pruned after each recompose.
    """

    def compose(self) -> ComposeResult:
        """The mode badge, then Textual's keys."""
        if self._bindings_ready:
            typing = is_typing(self.screen.focused)
            yield Label(
                mode_name(typing),
                classes="footer-mode " + ("-input" if typing else "-list"),
            )
        yield from super().compose()

    async def recompose(self) -> None:
        """Rebuild the keys, then forget the watchers of the keys just removed."""
        await super().recompose()
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for entries in watchers.values():
            entries[:] = [(node, cb) for node, cb in entries if getattr(node, "is_attached", True)]
