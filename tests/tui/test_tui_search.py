"""Main screen: search bar, result tabs, history (persisted, re-runnable), details, compare."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.widgets import Input, Select, Static
from tui_helpers import duckdb_only, screen_text, search, settle, submit

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.compare import CompareScreen
from keepui.tui.screens.error import ErrorModal
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import FindQuery, Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


async def test_search_opens_a_tab_and_records_history(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        tabs = app.screen.query_one(ResultTabs)
        pane = tabs.current
        assert pane is not None and "storage" in pane.ids
        assert [str(c.label) for c in pane.columns.values()] == pane.rows_layout.keys
        assert pane.rows_layout.keys == ["#", "title · id", "score", "sim", "bm25", "decay", "age"]
        assert app.screen.query_one(HistoryList).option_count == 1
        assert app.focused is app.screen.query_one("#search-input")  # results never take it
        await pilot.press("down")
        assert app.focused is pane
        record = seeded.searches()[0]
        assert record.q.query == "storage" and record.ids == pane.ids


async def test_inline_filters_and_mode(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#search-mode", Select).value = "bm25"
        await search(app, pilot, "search tag:topic=search n:5")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        assert pane.q == FindQuery("search", ["topic=search"], 5, mode="bm25")
        assert pane.result.mode == "bm25"
        assert set(pane.ids) <= {"vectors", "bm25"} and pane.ids
        assert seeded.searches()[0].q.mode == "bm25"


async def test_each_search_keeps_its_tab(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        await search(app, pilot, "search")
        tabs = app.screen.query_one(ResultTabs)
        assert [p.q.query for p in tabs.panes] == ["storage", "search"]
        assert tabs.current is tabs.panes[1]
        await pilot.press("left_square_bracket")
        assert tabs.current is tabs.panes[0]
        await pilot.press("w")
        await pilot.pause()
        assert [p.q.query for p in tabs.panes] == ["search"]


async def test_history_persists_and_reruns(seeded: Workbench) -> None:
    seeded.record_search(FindQuery("rivers", ["topic=geo"]), ["rivers"])
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        history = app.screen.query_one(HistoryList)
        assert history.option_count == 1 and history.records[0].q.query == "rivers"
        history.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.q == FindQuery("rivers", ["topic=geo"])
        assert pane.ids == ["rivers"]
        assert app.screen.query_one("#search-input", Input).value == "rivers tag:topic=geo n:10"
        assert history.option_count == 1  # the same search again: one entry, run twice
        assert history.counts == [2] and "2 runs" in str(history.get_option_at_index(0).prompt)
    assert [r.q.query for r in seeded.searches()] == ["rivers", "rivers"]


async def test_detail_pane_shows_scores_tags_and_marked_text(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "backups directory")
        detail = app.screen.query_one(DetailPane)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.current_hit is not None
        assert detail.hit == pane.current_hit
        rendered = detail.query_one("#detail-body", Static).render()
        plain = rendered.plain if isinstance(rendered, Text) else str(rendered)
        assert pane.current_hit.id in plain and "score " in plain and "tags " in plain
        assert "Backups copy the directory." in plain


async def test_moving_the_cursor_changes_the_detail(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "search storage")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and len(pane.hits) >= 3
        await pilot.press("j")
        await settle(app, pilot)
        assert app.screen.query_one(DetailPane).hit == pane.hits[1]
        await pilot.press("G")
        await settle(app, pilot)
        assert pane.cursor_row == len(pane.hits) - 1
        await pilot.press("g", "k")
        assert pane.cursor_row == 0


async def test_compare_two_tabs(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage tag:topic=storage")
        await search(app, pilot, "search tag:topic=search")
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        cmp = app.screen.comparison
        assert cmp.left == ["storage"] and set(cmp.entered) == {"vectors", "bm25"}
        body = str(app.screen.query_one("#compare-body", Static).render())
        assert "entered (2)" in body and "left (1)" in body
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


@duckdb_only("the TUI alone: with one tab, c does nothing")
async def test_compare_needs_two_tabs(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "c")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


@duckdb_only("the search bar rejects n:lots before any search")
async def test_bad_inline_filter_shows_the_error_dialog(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await submit(app, pilot, "storage n:lots")
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.error_title == "Invalid input" and "n:lots" in app.screen.message
        await pilot.press("escape")
        assert app.screen.query_one(ResultTabs).current is None


async def test_hit_rows_show_score_components(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "DuckDB storage mode:hybrid history:on")
        pane = app.screen.query_one(ResultTabs).current
        assert isinstance(pane, ResultPane)
        row = [str(cell) for cell in pane.get_row_at(0)]
        hit = pane.hits[0]
        # no title tag and no file name: the summary's first words, then the id
        assert hit.id == "storage" and row[1].startswith("We chose DuckDB for")
        assert row[1].rstrip().endswith("storage older v1 of 2")  # the older version matched
        assert row[2] == f"{hit.score:.3f}"
        assert row[3] == f"{hit.scores['dense']:.3f}" and row[5] == "1.00"
        assert row[6] == "2d"


async def test_brackets_in_ids_and_text_are_shown_as_typed(
    app: KeepuiApp, seeded: Workbench
) -> None:
    seeded.put("[/] closes nothing; [bold]glacier[/bold] notes", id="[draft]", tags=["topic=ice"])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "glacier notes tag:topic=ice")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.ids == ["[draft]"]
        text = screen_text(app)
        assert "[draft]" in text and "[/] closes nothing; [bold]glacier[/bold]" in text
        await pilot.press("enter")
        await settle(app, pilot)
        assert "[/] closes nothing" in screen_text(app)
