"""KeepuiApp: the workbench TUI over one Workbench (screens, themes, model warm-up, store poll)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from pathlib import PurePath
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from keepui.tui.commands import KeepuiCommands
from keepui.tui.messages import (
    EngineFailed,
    HeldKey,
    ModelReady,
    QueueChanged,
    ReleaseKeys,
    StoreChanged,
    StoreStats,
)
from keepui.tui.screens.error import ErrorModal, describe
from keepui.tui.screens.help import HelpScreen
from keepui.tui.screens.main import MainScreen
from keepui.tui.screens.queue import QueueModal
from keepui.tui.screens.too_small import TooSmall, too_small
from keepui.tui.theming import DEFAULT_THEME, THEMES, configured_theme, css_paths, derived_variables
from keepui.tui.widgets.format import tui_words
from keepui.tui.widgets.queue_status import QueueStatus
from keepui_engine import KeepuiError, Stats, Workbench

HOLD_KEYS_S = 2.0
"""Longest that keys wait for a new screen to be built."""
FREEZE_AFTER_MODULES = 50
"""Modules imported since the last `gc.freeze` that make another one worth it (a library)."""
LISTEN_TICK_S = 0.1
"""How soon a change listener notices the app closing (quitting waits for it)."""


class KeepuiApp(App[None]):
    """The research workbench.

    The model loads in a thread worker after the first paint; a poll of the store's counts and
    of the background queue every `poll_interval` seconds (and right after each write from the
    TUI) notices writes from other processes (which reach this one through the store socket)
    and the worker thread's progress, and refreshes the screens.

    Args:
        workbench: A Workbench that owns its store (and usually serves it).
        theme: A theme name; None means `[tui] theme` in keepui.toml, else keepui-dark.
        poll_interval: Seconds between store polls; None turns polling off (tests). On a
            PostgreSQL store the app polls when another process commits a write instead
            (LISTEN/NOTIFY), with no timer.
        warm_up: Load the model in the background at start.
    """

    TITLE = "keepui"
    CSS_PATH = list[str | PurePath](css_paths())
    COMMANDS = App.COMMANDS | {KeepuiCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (20, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("p", "show_queue", "Show queue", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    model_state = reactive("loading")
    """`loading`, `ready` or `failed`: the embedding model's state, shown in the status bar."""
    stats: reactive[Stats | None] = reactive(None)
    """The latest store counts."""
    queue: reactive[dict[str, Any] | None] = reactive(None)
    """The latest `Workbench.pending()` report (None until the first poll)."""

    def __init__(
        self,
        workbench: Workbench,
        *,
        theme: str | None = None,
        poll_interval: float | None = 2.0,
        warm_up: bool = True,
    ) -> None:
        super().__init__()
        self.workbench = workbench
        self.poll_interval = poll_interval
        self._warm = warm_up
        self._poll_again = False
        self._frozen_modules = 0
        self._held: list[events.Key] = []
        self._release_task: asyncio.Task[None] | None = None
        for palette in THEMES:
            self.register_theme(palette)
        wanted = theme or configured_theme(workbench.store) or DEFAULT_THEME
        self.theme_problem: str | None = None
        if wanted not in self.available_themes:
            self.theme_problem = (
                f"Unknown theme {wanted!r} in [tui] theme; using {DEFAULT_THEME}. Choose one of "
                f"{', '.join(t.name for t in THEMES)} (or a Textual theme)."
            )
            wanted = DEFAULT_THEME
        self.theme = wanted

    async def on_event(self, event: events.Event) -> None:
        """Keys that arrive while a new screen is still being built wait for it.

        A key that opens a dialog (`f`) is acted on at once, but the dialog mounts later; keys
        typed right after it (a path typed fast, a burst from tmux) would reach the dialog
        before any field has the focus, and be lost. They are held, in order, and handed on
        once the screen is up.
        """
        if (
            isinstance(event, events.Key)
            and not isinstance(event, HeldKey)
            and (self._held or (self._screen_stack and not self.screen.is_mounted))
        ):
            self._held.append(event)
            if len(self._held) == 1:
                self._release_when_mounted(self.screen)
            return
        await super().on_event(event)

    def _release_when_mounted(self, screen: Screen[Any]) -> None:
        async def wait() -> None:
            mounted = getattr(screen, "_mounted_event", None)  # set once on_mount has run
            if mounted is not None:
                # a screen removed before it was built never sets it: do not hold keys forever
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(mounted.wait(), HOLD_KEYS_S)
            self.post_message(ReleaseKeys())

        self._release_task = asyncio.create_task(wait())

    async def on_release_keys(self, message: ReleaseKeys) -> None:
        """Hand the held keys on, in order (a key that opens another screen holds the rest)."""
        while self._held:
            if not self.screen.is_mounted:
                self._release_when_mounted(self.screen)
                return
            key = self._held.pop(0)
            await super().on_event(HeldKey(key.key, key.character))

    def get_css_variables(self) -> dict[str, str]:
        """Textual's variables plus ours (pane borders, diff colours), derived when unset."""
        variables = super().get_css_variables()
        for key, value in derived_variables(variables).items():
            variables.setdefault(key, value)
        self.theme_variables = variables
        return variables

    def on_mount(self) -> None:
        """Paint the main screen first; then load the model and start polling."""
        self.sub_title = str(self.workbench.store)
        self.push_screen(MainScreen(self.workbench))
        self.call_after_refresh(self.check_size)
        if self.theme_problem:
            self.notify(self.theme_problem, severity="warning", timeout=8)
        if self._warm:
            self.call_after_refresh(self.warm_up)
        else:
            self.model_state = "ready"
            self.call_after_refresh(self.freeze_heap)
        self.action_poll()
        if self.poll_interval and self.workbench.settings.url is not None:
            self.listen_for_changes()  # PostgreSQL: LISTEN/NOTIFY instead of polling
        elif self.poll_interval:
            self.set_interval(self.poll_interval, self.action_poll)

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def warm_up(self) -> None:
        """Load the embedding model and the vector index in a worker."""
        self.workbench.warm_up()
        self.post_message(ModelReady())

    def on_model_ready(self, message: ModelReady) -> None:
        """Say so in the status bar."""
        self.model_state = "ready"
        self.freeze_heap()

    def freeze_heap(self) -> None:
        """Keep the garbage collector off the libraries and the model (`gc.freeze`).

        A full collection walks every tracked object, and once torch or scipy are imported
        (batch embedding, summaries, BM25) that is some 450k objects: a pause of a few hundred
        ms every few searches. Frozen objects are skipped. Done again when a library was
        imported since (the worker thread loads torch on its first batch); undone at the end.
        """
        if len(sys.modules) - self._frozen_modules < FREEZE_AFTER_MODULES:
            return
        self._frozen_modules = len(sys.modules)
        gc.collect(1)  # young garbage is not frozen with the rest
        gc.freeze()

    def on_unmount(self) -> None:
        """Give everything back to the garbage collector."""
        gc.unfreeze()

    def action_poll(self) -> None:
        """Read the store's counts and the queue now (in a worker).

        While a poll is still waiting (a long write holds the store) no second thread starts;
        one more poll runs when it ends, so a write is never missed.
        """
        if any(w.group == "poll" and not w.is_finished for w in self.workers):
            self._poll_again = True
            return
        self._poll_again = False
        self._poll()

    @work(thread=True, exclusive=True, group="listen", exit_on_error=False)
    def listen_for_changes(self) -> None:
        """Poll once each time another process commits a write to a PostgreSQL store.

        The feed's own connection LISTENs; a burst of writes is one poll. Stops with the app.
        """
        feed = self.workbench.change_feed()
        if feed is None:
            return
        worker = get_current_worker()
        try:
            while not worker.is_cancelled:
                if feed.wait(LISTEN_TICK_S):
                    self.call_from_thread(self.action_poll)
        finally:
            feed.close()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _poll(self) -> None:
        # A poll that fails says nothing; the next user action will show the error.
        try:
            self.post_message(StoreStats(self.workbench.stats()))
            self.post_message(QueueChanged(self.workbench.pending()))
        except KeepuiError:
            return

    def on_queue_changed(self, message: QueueChanged) -> None:
        """Keep the latest queue report; the queue line and dialog follow `queue`."""
        self.queue = message.report
        if self.model_state == "ready":
            self.freeze_heap()

    def on_store_stats(self, message: StoreStats) -> None:
        """Tell every screen when the counts moved (a write here or in another process)."""
        new = message.stats
        old = self.stats
        self.stats = new
        if old is None or (old.items, old.versions) == (new.items, new.versions):
            return
        for screen in self.screen_stack:
            screen.post_message(StoreChanged(new))

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "poll" and event.worker.is_finished and self._poll_again:
            self.action_poll()
        if event.state is not WorkerState.ERROR or event.worker.error is None:
            return
        if event.worker.group == "model":
            self.model_state = "failed"
        self.post_message(EngineFailed(event.worker.error))

    def on_engine_failed(self, message: EngineFailed) -> None:
        """The one error path: every failure ends in an ErrorModal with its title.

        Engine messages name CLI flags (`--since 'x'`); here they say the search bar's words.
        """
        title, text = describe(message.error)
        self.push_screen(ErrorModal(title, tui_words(text)))

    def on_resize(self, event: events.Resize) -> None:
        """Below the smallest size every screen can lay out, say so (until it grows)."""
        self.check_size(event.size.width, event.size.height)

    def check_size(self, width: int | None = None, height: int | None = None) -> None:
        """Show (or update, or close) the too-small notice for the window's size."""
        if len(self.screen_stack) < 2:
            return  # not started: on_mount checks once the main screen is up
        if width is None or height is None:
            width, height = self.size
        screen = self.screen
        if too_small(width, height):
            if isinstance(screen, TooSmall):
                screen.show_size(width, height)
            else:
                self.push_screen(TooSmall())
        elif isinstance(screen, TooSmall):
            self.pop_screen()

    def action_show_queue(self) -> None:
        """Open the queue dialog: failures with their errors, retry and purge."""
        if not isinstance(self.screen, QueueModal):
            self.push_screen(QueueModal(self.workbench))

    @on(QueueStatus.Selected)
    def _queue_clicked(self) -> None:
        self.action_show_queue()

    def action_help(self) -> None:
        """Show the key reference."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
