"""Flow screen results: grouped by facet value when a flow stops ambiguous, neighbours after
find-deep; every hit opens with Enter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import make_fake_store
from test_tui_flows import finished
from textual.pilot import Pilot
from tui_helpers import screen_text, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.flows import FlowsScreen
from keepui.tui.widgets.flow_results import FlowResults, flow_rows
from keepui_engine import FindQuery, PutSpec, Workbench, open_workbench

NOTES = {
    "db-choice": (
        "We decided to store everything in DuckDB: one file to back up.",
        ["kind=decision"],
    ),
    "marathon": ("Training plan: long run on Sunday, intervals on Tuesday.", ["kind=note"]),
    "login-web": (
        "Login bug on the web app: sessions expire after five minutes.",
        ["project=web", "kind=bug"],
    ),
    "login-mobile": (
        "Login bug on the mobile app: the session token is lost.",
        ["project=mobile", "kind=bug"],
    ),
    "login-web-2": (
        "Web login: the password reset link expires too early.",
        ["project=web", "kind=bug"],
    ),
    "login-mobile-2": (
        "Mobile login fails offline: the token refresh needs the network.",
        ["project=mobile", "kind=bug"],
    ),
}
"""Login bugs that the project tag splits (as in tests/scenarios/test_flow_real.py)."""


def login_store(path: Path, *, fake: bool = True, branching: bool = False) -> Workbench:
    """The notes in a store; `branching` keeps query-resolve from settling on a winner (the
    fake embedder's margins are large), so a split question ends ambiguous."""
    if fake:
        make_fake_store(path, half_life_days=0)
        if branching:
            toml = path / "keepui.toml"
            toml.write_text(toml.read_text().replace("# margin_high = 0.15", "margin_high = 5"))
    bench = open_workbench(path, own=True)
    bench.put_many([PutSpec(t, id=i, tags=tags) for i, (t, tags) in NOTES.items()])
    return bench


@pytest.fixture
def login_wb(tmp_path: Path) -> Iterator[Workbench]:
    bench = login_store(tmp_path / "store", branching=True)
    yield bench
    bench.close()


async def open_flow(pilot: Pilot[Any], wb: Workbench, q: FindQuery, flow: str) -> FlowsScreen:
    await settle(pilot.app, pilot)
    screen = FlowsScreen(wb, q, flow=flow, timings=False)
    await pilot.app.push_screen(screen)
    await finished(screen)
    await settle(pilot.app, pilot)
    return screen


async def test_an_ambiguous_flow_shows_one_group_per_facet_value(login_wb: Workbench) -> None:
    app = KeepuiApp(login_wb, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(pilot, login_wb, FindQuery("login", mode="bm25"), "query-resolve")
        result = screen.result
        assert result is not None and result.reason.startswith("ambiguous: the results split")
        results = screen.query_one(FlowResults)
        assert results.grouped and results.border_title == "results by facet"
        headings = [v for k, v in results.rows if k == "heading"]
        assert headings[:2] == ["project=mobile · 2 hits", "project=web · 2 hits"]
        groups: dict[str, list[str]] = {}
        for kind, value in results.rows:
            if kind == "heading":
                here = groups.setdefault(value, [])
            else:
                here.append(value["id"])
        assert sorted(groups["project=web · 2 hits"]) == ["login-web", "login-web-2"]
        assert sorted(groups["project=mobile · 2 hits"]) == ["login-mobile", "login-mobile-2"]
        assert "project=web · 2 hits" in screen_text(app)
        # the cursor starts on the first hit, not a heading; Enter opens it
        first = results.current
        assert first is not None and first["id"] in groups["project=mobile · 2 hits"]
        results.focus()
        await pilot.press("down", "down")  # past the mobile pair and the web heading
        assert results.current is not None and results.current["id"].startswith("login-web")
        opened = results.current["id"]
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen) and app.screen.doc_id == opened


async def test_find_deep_shows_each_hits_neighbours_under_it(login_wb: Workbench) -> None:
    app = KeepuiApp(login_wb, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(pilot, login_wb, FindQuery("login bug"), "find-deep")
        result = screen.result
        assert result is not None and result.status == "done"
        related: dict[str, list[dict[str, Any]]] = result.data["related"]
        assert any(related.values())
        results = screen.query_one(FlowResults)
        expected: list[tuple[str, str]] = []
        for hit in result.results:
            expected.append(("hit", hit["id"]))
            expected += [("related", n["id"]) for n in related.get(hit["id"], [])]
        assert [(k, v["id"]) for k, v in results.rows] == expected
        text = screen_text(app)
        assert "↳ similar" in text or "↳ edge:" in text
        index = next(i for i, (k, _) in enumerate(results.rows) if k == "related")
        neighbour = results.rows[index][1]["id"]
        results.focus()
        results.highlighted = index
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen) and app.screen.doc_id == neighbour


def test_results_without_branches_are_one_list() -> None:
    hits = [{"id": "a", "score": 0.5, "summary": "A"}, {"id": "b", "score": 0.4}]
    assert flow_rows(hits, {"reason": "clear winner"}) == [("hit", hits[0]), ("hit", hits[1])]
    branches = {"facets": ["k=v"], "branches": [{"results": [hits[1]]}, None]}
    assert flow_rows(hits, branches) == [
        ("heading", "k=v · 1 hit"),
        ("hit", hits[1]),
        ("heading", "other · 1 hit"),
        ("hit", hits[0]),
    ]


@pytest.mark.model
async def test_real_model_login_bug_groups_by_project(tmp_path: Path) -> None:
    wb = login_store(tmp_path / "store", fake=False)
    try:
        app = KeepuiApp(wb, poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_flow(pilot, wb, FindQuery("login bug"), "query-resolve")
            assert screen.result is not None and screen.result.status == "stopped"
            results = screen.query_one(FlowResults)
            headings = {v.split(" · ")[0]: v for k, v in results.rows if k == "heading"}
            assert {"project=web", "project=mobile"} <= set(headings)
            groups: dict[str, set[str]] = {}
            for kind, value in results.rows:
                if kind == "heading":
                    here = groups.setdefault(value.split(" · ")[0], set())
                else:
                    here.add(value["id"])
            assert groups["project=web"] == {"login-web", "login-web-2"}
            assert groups["project=mobile"] == {"login-mobile", "login-mobile-2"}
    finally:
        wb.close()
