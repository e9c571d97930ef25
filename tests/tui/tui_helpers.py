"""Helpers for the Pilot tests: deterministic seed data, waiting for workers, screen text."""

from __future__ import annotations

import contextlib
import io
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from rich.console import Console

if TYPE_CHECKING:
    from textual.app import App
    from textual.pilot import Pilot

    from keepui_engine import Workbench

T0 = datetime(2026, 11, 2, 9, 0, 0)
"""The frozen engine clock starts here (naive UTC) and ticks a minute per write."""
NOW = datetime(2026, 11, 4, 12, 0, 0, tzinfo=UTC)
"""The UI's frozen "now" (ages are measured from it)."""

STORAGE_V1 = "We chose DuckDB for storage.\nOne file holds every table."
STORAGE_V2 = (
    "We chose DuckDB for storage.\nOne file holds every table and every version.\n"
    "Backups copy the directory."
)
SEED: list[tuple[str, str, list[str]]] = [
    ("storage", STORAGE_V1, ["topic=storage"]),
    ("storage", STORAGE_V2, ["topic=storage", "status=decided"]),
    ("vectors", "The vector index is usearch, exact below 30k vectors.", ["topic=search"]),
    ("bm25", "BM25 scores words; hybrid search fuses it with dense similarity.", ["topic=search"]),
    ("rivers", "Rivers of Europe: the Danube and the Rhine.", ["topic=geo"]),
    ("meeting", "Meeting notes: storage review, backups, and the search roadmap.", []),
]


def words(n: int, stem: str) -> str:
    """`stem0 stem1 … stem6 stem0 …`, n words."""
    return " ".join(f"{stem}{i % 7}" for i in range(n))


ATLAS = "\n\n".join(
    [
        "# Harbour\n" + words(200, "boat") + " lighthouse keeper",
        "# Mountains\n" + words(200, "peak") + " glacier crevasse",
        "# Kitchen\n" + words(200, "pan") + " sourdough starter",
    ]
)
"""A long note of three headed sections (three parts), each ending in its own two words."""


T_AFTER_SEED = T0 + timedelta(minutes=len(SEED))
"""Where the frozen clock stands once the seed is written."""


class Clock:
    """A clock that ticks one minute per call (the engine's `_now`)."""

    def __init__(self, start: datetime = T0) -> None:
        self.t = start

    def __call__(self) -> datetime:
        self.t += timedelta(minutes=1)
        return self.t


def seed(wb: Workbench) -> None:
    """Put the seed documents (storage gets two versions)."""
    for doc_id, text, tags in SEED:
        wb.put(text, id=doc_id, tags=tags)


def duckdb_only(reason: str) -> pytest.MarkDecorator:
    """Keep one test of a both-backends module (see conftest's `tui_backend`) on DuckDB only,
    saying why: a test of the TUI alone (a parse error, layout, a dialog) would learn nothing
    more on PostgreSQL, and each PostgreSQL run costs a freshly seeded database."""
    assert reason
    return pytest.mark.parametrize("tui_backend", ["duckdb"])


async def settle(app: App[Any], pilot: Pilot[Any], rounds: int = 2) -> None:
    """Wait until workers and the messages they post have all been handled.

    A worker's message often starts another worker (a search opens a tab, whose highlighted
    hit loads its text), so wait until `rounds` passes in a row find no worker left.
    """
    from textual.worker import WorkerCancelled

    quiet = 0
    for _ in range(50):
        finite = _finite(app)
        if finite:  # an empty list would mean every worker
            # a worker superseded by a newer one of its group (cancelled) is finished too
            with contextlib.suppress(WorkerCancelled):
                await app.workers.wait_for_complete(finite)
        await pilot.pause()
        if all(worker.is_finished for worker in _finite(app)):
            quiet += 1
            if quiet >= rounds:
                return
        else:
            quiet = 0
    raise AssertionError("the app never settled: workers kept starting")


LONG_LIVED = {"_loader", "listen"}
"""Worker groups that run as long as their widget or app (DirectoryTree's loading queue, the
app's PostgreSQL change listener)."""


def _finite(app: App[Any]) -> list[Any]:
    return [w for w in app.workers if w.group not in LONG_LIVED]


def screen_text(app: App[Any]) -> str:
    """The current screen as plain text (what a user would read)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    screen = app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens, simplify=True
    )
    console.print(screen)
    return console.export_text()


async def submit(app: App[Any], pilot: Pilot[Any], text: str) -> None:
    """Put text in the search bar and press Enter (typing it key by key is slow), then wait."""
    from textual.widgets import Input

    box = app.screen.query_one("#search-input", Input)
    box.value = text
    box.focus()
    await pilot.press("enter")
    await settle(app, pilot)


async def search(app: App[Any], pilot: Pilot[Any], text: str, *, into_hits: bool = True) -> None:
    """Run a search from the bar; fail if it ends in an error dialog. Then, as a user does to
    act on a hit, press Down into the hits (the focus stays in the bar until then);
    `into_hits=False` stays in the bar."""
    from keepui.tui.screens.error import ErrorModal

    await submit(app, pilot, text)
    screen = app.screen
    if isinstance(screen, ErrorModal):
        raise AssertionError(f"search {text!r} failed: {screen.error_title}: {screen.message}")
    if into_hits:
        await pilot.press("down")
        await settle(app, pilot)


async def burst(app: App[Any], pilot: Pilot[Any], *keys: str) -> None:
    """Send keys all at once, as tmux or a fast typist does (Pilot's `press` waits after each
    key, which hides races between a key that moves the focus and the keys after it)."""
    from textual import events
    from textual.keys import _character_to_key

    driver = app._driver
    assert driver is not None
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        char = key if len(key) == 1 else None
        event = events.Key(name, char)
        event.set_sender(app)
        driver.send_message(event)
    await settle(app, pilot)
