"""SVG snapshots of the research features: the facet browser, a judged tab, a flow's results
grouped by facet (fake embedder, frozen clock, no decay, no blink, no timings).

Review the report before `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_tui_flow_groups import login_store
from test_tui_snapshots import _ready
from textual.pilot import Pilot
from tui_helpers import search

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.flows import FlowsScreen
from keepui_engine import FindQuery, Workbench

SIZES = [(80, 24), (120, 40)]
pytestmark = pytest.mark.snapshot

SPLIT_FLOW = """\
# query-branch's ambiguous ending, by meaning only: BM25 scores (tuned elsewhere) stay out of
# the picture, as in test_tui_snapshots.py.
match: sequence
rules:
  - id: mobile
    do: find
    with: {query: "{params.query}", tags: [project=mobile], mode: dense, limit: 5}
  - id: web
    do: find
    with: {query: "{params.query}", tags: [project=web], mode: dense, limit: 5}
  - id: all
    do: find
    with: {query: "{params.query}", mode: dense, limit: 6}
  - return:
      status: stopped
      with:
        reason: "ambiguous: the results split by project=mobile, project=web"
        results: "{all.results}"
        facets: [project=mobile, project=web]
        branches: ["{mobile}", "{web}"]
"""
"""A state doc that ends as query-branch does when tags split the results."""


@pytest.fixture
def login_wb(tmp_path: Path) -> Iterator[Workbench]:
    bench = login_store(tmp_path / "store", branching=True)
    yield bench
    bench.close()


class TestFacets:
    @pytest.mark.parametrize("size", SIZES)
    def test_whole_store_two_values_of_a_key(
        self, login_wb: Workbench, snap_compare: Any, size: tuple[int, int]
    ) -> None:
        app = KeepuiApp(login_wb, poll_interval=None)

        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await pilot.press("escape", "b")
            await _ready(pilot)
            await pilot.press("down", "space", "down", "space")  # kind=decision, kind=note
            await _ready(pilot)

        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestJudgments:
    def test_judged_rows_and_the_score_line(self, login_wb: Workbench, snap_compare: Any) -> None:
        app = KeepuiApp(login_wb, poll_interval=None)

        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            await search(pilot.app, pilot, "login bug mode:dense")
            await pilot.press("plus", "plus", "down", "minus", "down", "plus")
            await _ready(pilot)

        assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


class TestGroupedFlow:
    @pytest.mark.parametrize("size", SIZES)
    def test_ambiguous_results_by_facet(
        self, login_wb: Workbench, snap_compare: Any, size: tuple[int, int]
    ) -> None:
        login_wb.put(SPLIT_FLOW, id=".state/split-by-project")
        app = KeepuiApp(login_wb, poll_interval=None)

        async def run_before(pilot: Pilot[Any]) -> None:
            await _ready(pilot)
            q = FindQuery("login bug", mode="dense")
            screen = FlowsScreen(login_wb, q, flow="split-by-project", timings=False)
            await pilot.app.push_screen(screen)
            await _ready(pilot)
            screen.query_one("#flow-results").focus()
            await _ready(pilot)

        assert snap_compare(app, terminal_size=size, run_before=run_before)
