"""SVG snapshots of each screen at 120x40 (fake embedder, frozen clock, no decay, no blink).

Searches use the dense channel only, so changes to BM25 or fusion do not move these pictures.

Review the report before `pytest tests/tui --snapshot-update`; regenerate when textual is bumped.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import search, settle, submit

from keepui.app import KeepuiApp
from keepui.screens.document import DocumentScreen
from keepui.screens.flows import FlowsScreen
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


class TestDocumentScreen:
    def test_timeline_and_text(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.app.push_screen(DocumentScreen(snap_app.workbench, "storage"))
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)


class TestDiffScreen:
    def test_previous_vs_current(self, snap_app: KeepuiApp, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.app.push_screen(DocumentScreen(snap_app.workbench, "storage"))
            await _ready(pilot)
            await pilot.press("d")
            await _ready(pilot)

        assert snap_compare(snap_app, terminal_size=SIZE, run_before=run_before)


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
