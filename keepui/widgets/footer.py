"""KeepuiFooter: Textual's Footer without its per-recompose leak of FooterKey widgets."""

from __future__ import annotations

from textual.widgets import Footer


class KeepuiFooter(Footer):
    """The key bar; identical to Footer except that it releases the keys it replaces.

    Every recompose (each focus or binding change) binds its new FooterKeys to this long-lived
    Footer's `compact`, and Textual prunes the entries of removed keys only when `compact`
    changes, so each search leaked a few dozen widgets, and garbage collection pauses grew with
    them (Textualize/textual#6666). Prune them after each recompose.
    """

    async def recompose(self) -> None:
        """Rebuild the keys, then forget the watchers of the keys just removed."""
        await super().recompose()
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for entries in watchers.values():
            entries[:] = [(node, cb) for node, cb in entries if getattr(node, "is_attached", True)]
