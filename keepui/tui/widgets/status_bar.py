"""StatusBar: the model's state, the store's counts, and what the app is doing."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

MODEL_TEXT = {"loading": "model loading…", "ready": "model ready", "failed": "model failed"}


class StatusBar(Static):
    """One line at the bottom of a screen; follows the app's `model_state` and `stats`."""

    model = reactive("loading")
    """`loading`, `ready` or `failed`."""
    counts = reactive("")
    """`12 items · 30 versions`."""
    activity = reactive("")
    """What is running now (`searching…`), or empty."""
    notice = reactive("")
    """What the active tab's search says about its hits (`3 hit(s) … are hidden`), or empty."""

    def on_mount(self) -> None:
        """Follow the app's model state and store counts."""
        self.watch(self.app, "model_state", self._set_model)
        self.watch(self.app, "stats", self._set_stats)

    def _set_model(self, state: str) -> None:
        self.model = state

    def _set_stats(self, stats: object) -> None:
        if stats is not None:
            items, versions = getattr(stats, "items", 0), getattr(stats, "versions", 0)
            self.counts = f"{items} items · {versions} versions"

    def render(self) -> str:
        """`model ready │ 12 items · 30 versions │ searching… │ 2 hits hidden …`."""
        parts = [MODEL_TEXT.get(self.model, self.model), self.counts, self.activity, self.notice]
        return " │ ".join(p for p in parts if p)
