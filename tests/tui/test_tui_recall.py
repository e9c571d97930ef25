"""The search bar and the search history, keys only: ↑/↓ recall earlier queries, a re-run puts
the cursor at the end, repeats collapse with a count, ages move on, a newer search supersedes
one still running, and a long query costs no more per key than a short one."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from tui_helpers import NOW, burst, search, settle

import keepui.tui.widgets.format as fmt
from keepui.tui.app import KeepuiApp
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.query_input import QueryInput
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import FindQuery, FindResult, Workbench


def _box(app: KeepuiApp) -> QueryInput:
    return app.screen.query_one("#search-input", QueryInput)


def _at_end(box: QueryInput) -> bool:
    return box.selection.is_empty and box.cursor_position == len(box.value)


async def test_up_and_down_recall_earlier_queries_for_editing(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for query in ("storage", "rivers", "vector index"):
            await search(app, pilot, query, into_hits=False)
        box = _box(app)
        await pilot.press(*"draft")  # typed over the selected last query, not run yet
        assert box.value == "draft"
        await pilot.press("up")
        assert box.value == "vector index" and _at_end(box)
        await pilot.press("up", "up")
        assert box.value == "storage" and _at_end(box)
        await pilot.press("up")  # nothing older: stays
        assert box.value == "storage"
        await pilot.press("down")
        assert box.value == "rivers" and _at_end(box)
        await pilot.press(*" delta")  # edit the recalled query, cursor at its end
        assert box.value == "rivers delta"
        await pilot.press("down", "down")  # back past the newest to what was being typed
        assert box.value == "draft" and app.focused is box
        await pilot.press("down")  # nothing newer: into the hits
        assert app.focused is app.screen.query_one(ResultTabs).current


async def test_up_after_enter_skips_the_query_just_run(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage", into_hits=False)
        await search(app, pilot, "rivers", into_hits=False)
        await burst(app, pilot, "up", "down", "up")  # typed fast: each seen, in order
        assert _box(app).value == "storage" and app.focused is _box(app)


async def test_rerun_from_history_puts_the_cursor_at_the_end(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "rivers", into_hits=False)
        box = _box(app)
        box.value, box.cursor_position = "mutual", 5  # the cursor mid-word, as left
        await pilot.press("ctrl+y", "ctrl+y")  # (touch nothing else)
        history = app.screen.query_one(HistoryList)
        history.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert box.value == "rivers" and _at_end(box)
        await pilot.press("slash", "Z")  # back in the bar: the letter goes at the end
        assert box.value == "riversZ"


async def test_repeated_searches_collapse_and_ages_move_on(
    app: KeepuiApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for query in ("storage", "rivers", "storage"):
            await search(app, pilot, query, into_hits=False)
        await settle(app, pilot)
        history = app.screen.query_one(HistoryList)
        assert [r.q.query for r in history.records] == ["storage", "rivers"]
        assert history.counts == [2, 1] and history.option_count == 2
        first = str(history.get_option_at_index(0).prompt)
        assert "2 runs" in first and "ago" in first
        age = fmt.age(history.records[0].at)
        monkeypatch.setattr(fmt, "now", lambda: NOW + timedelta(days=3))
        history.refresh_ages()  # what its timer does
        later = fmt.age(history.records[0].at)
        assert later != age and f"{later} ago" in str(history.get_option_at_index(0).prompt)


async def test_a_newer_search_supersedes_one_still_running(
    app: KeepuiApp, seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    find = seeded.find_query

    def slow_for_storage(q: FindQuery) -> FindResult:
        if q.query == "storage":
            release.wait(30)
        return find(q)

    monkeypatch.setattr(seeded, "find_query", slow_for_storage)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await pilot.press(*"rivers", "enter")  # while storage still runs
        tabs = app.screen.query_one(ResultTabs)
        await _until(pilot, lambda: len(tabs.panes) == 1)
        assert tabs.panes[0].q.query == "rivers"
        release.set()
        await settle(app, pilot)
        assert [p.q.query for p in tabs.panes] == ["rivers"]  # storage's results dropped
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert [r.q.query for r in screen.history] == ["rivers", "storage"]  # both ran
        assert app.focused is _box(app)


async def _until(pilot: Any, ok: Any) -> None:
    """Let the app run until `ok()` (each pause hands the loop to pending messages)."""
    for _ in range(500):
        if ok():
            return
        await pilot.pause()
    raise AssertionError("never happened")


async def test_a_keystroke_costs_the_same_at_any_length(
    app: KeepuiApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long plain query is measured by its length and drawn by its visible window: the
    work a key does never reads the whole value (Input scans and draws all of it)."""
    import textual.widgets._input as textual_input

    import keepui.tui.widgets.query_input as query_input

    drawn: list[int] = []
    real_text = query_input.Text

    def text(value: str, **kwargs: Any) -> Any:
        drawn.append(len(value))
        return real_text(value, **kwargs)

    def whole_value_scan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cell offset was computed by scanning the value")

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        box = _box(app)
        box.value = "a" * 20_000
        await pilot.pause()
        monkeypatch.setattr(query_input, "Text", text)
        monkeypatch.setattr(textual_input, "expand_tabs_inline", whole_value_scan)
        await pilot.press(*"bcd")
        await pilot.pause()
        assert box.value == "a" * 20_000 + "bcd"
        assert drawn and max(drawn) <= box.size.width + 1  # only the visible window
        line = box.render_line(0).text
        assert line.rstrip().endswith("abcd")  # the end of the query, where the cursor is
