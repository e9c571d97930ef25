"""SVG snapshots of each screen at 120x40 (fake embedder, frozen clock, no decay, no blink).

Searches use the dense channel only, so changes to BM25 or fusion do not move these pictures.

Review the report before `pytest tests/tui --snapshot-update`; regenerate when textual is bumped.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import search, settle, submit

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.flows import FlowsScreen
from keepui_engine import FindQuery, Workbench

SIZE = (120, 40)
pytestmark = pytest.mark.snapshot


@pytest.fixture
def snap_app(seeded: Workbench) -> KeepuiApp:
    seeded.record_search(FindQuery("rivers", ["topic=geo"]), ["rivers"])
    return KeepuiApp(seeded, poll_interval=None)


async def _ready(pilot: Pilot[Any]) -> None:
    await settle(pilot.app, pilot)
    # pictures show an empty queue whatever the store poll reported last
    pilot.app.queue = {"counts": {}, "runnable": 0, "failures": [], "running": []}  # type: ignore[attr-defined]
    # and no toasts: one that timed out on a slow machine would change the picture
    pilot.app.clear_notifications()
    await pilot.pause()


class TestMainScreen:
    def test_after_a_search(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await search(pilot.app, pilot, "storage backups mode:dense")
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)

    def test_light_theme_two_tabs(self, seeded: Workbench, snap_compare: Any) -> None:
        app = KeepuiApp(seeded, poll_interval=None, theme="keepui-light")

        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await search(pilot.app, pilot, "search tag:topic=search mode:dense")
            await search(pilot.app, pilot, "vector index mode:dense")
            await _ready(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


EUROPE = "file:///home/ana/projects/research/notes/geography/europe/rivers.md"
ASIA = "file:///home/ana/projects/research/notes/geography/asia/rivers.md"


@pytest.fixture
def rows_app(seeded: Workbench) -> KeepuiApp:
    """Hits of every kind of title: a `title` tag, two files of one name, first words."""
    seeded.put("Rivers of Europe: the Danube and the Rhine.", id=EUROPE)
    seeded.put("Rivers of Asia: the Mekong and the Yangtze.", id=ASIA)
    seeded.tag("rivers", tags=["title=Rivers survey"], remove=[])
    return KeepuiApp(seeded, poll_interval=None)


class TestResultRows:
    """The rows: a readable title, the id dimmed after it, fixed-width scores that fit."""

    @pytest.mark.parametrize("size", [(80, 24), (120, 40)])
    def test_titles_ids_and_scores(
        self, rows_app: KeepuiApp, snap_compare: Any, size: tuple[int, int]
    ) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await search(pilot.app, pilot, "rivers europe asia storage mode:dense dedup:off")
            await _ready(pilot)

        assert snap_compare(rows_app, terminal_size=size, run_before=run_before)


class TestDocumentScreen:
    def test_timeline_and_text(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.app.push_screen(DocumentScreen(snap_app.workbench, "storage"))
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)

    def test_opened_at_the_match(self, seeded: Workbench, snap_compare: Any) -> None:
        filler = "Notes on the terrain and its weather over the year. " * 40
        text = f"# Glaciers\nIce sheets. {filler}\n\n# Deserts\nDunes and a dry moraine. {filler}"
        seeded.put(text, id="handbook", tags=["title=Field handbook"])
        app = KeepuiApp(seeded, poll_interval=None)

        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await search(pilot.app, pilot, "dry moraine mode:bm25")
            await pilot.press("enter")
            await _ready(pilot)
            # the scroll to the matched part is requested after the text's refresh: on a
            # loaded machine that can land a frame later
            await settle(pilot.app, pilot, rounds=3)
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestDiffScreen:
    def test_previous_vs_current(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.app.push_screen(DocumentScreen(snap_app.workbench, "storage"))
            await _ready(pilot)
            await pilot.press("d")
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)

    def test_unified(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.app.push_screen(DocumentScreen(snap_app.workbench, "storage"))
            await _ready(pilot)
            await pilot.press("d")
            await _ready(pilot)
            await pilot.press("u")
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=(80, 24), run_before=run_before)


class TestFlowsScreen:
    def test_finished_flow(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            q = FindQuery("storage", mode="dense")
            # timings off: elapsed milliseconds would change every picture
            await pilot.app.push_screen(FlowsScreen(snap_app.workbench, q, timings=False))
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)


class TestErrorModal:
    def test_bad_filter(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await submit(pilot.app, pilot, "storage since:yesterday")
            await settle(pilot.app, pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)
