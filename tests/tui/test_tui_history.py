"""History toggle: a search answers about now; Ctrl+Y or `history:on` also searches older
versions, and the bar, the tab title, the row and the detail say so."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.widgets import Input, Label, Static, Tab, Tabs
from tui_helpers import duckdb_only, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.commands import KeepuiCommands
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.search_bar import HISTORY_TOOLTIP, SearchBar, format_search, parse_search
from keepui_engine import FindQuery, UsageError, Workbench

OLD = "The migration plan is codenamed zanzibar."
NEW = "The migration plan has no codename any more."


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """The searches here run on DuckDB and on PostgreSQL (their channels leave archived
    versions out in different ways)."""
    return str(request.param)


@pytest.fixture
def history_app(seeded: Workbench) -> KeepuiApp:
    """The seeded store plus `plan`, whose only mention of zanzibar is in its older version."""
    seeded.put(OLD, id="plan", tags=["topic=plan"])
    seeded.put(NEW, id="plan", tags=["topic=plan"])
    return KeepuiApp(seeded, poll_interval=None)


def tab_titles(app: KeepuiApp) -> list[str]:
    return [str(t.label) for t in app.screen.query_one(Tabs).query(Tab)]


def current(app: KeepuiApp) -> ResultPane:
    pane = app.screen.query_one(ResultTabs).current
    assert pane is not None
    return pane


def detail_text(app: KeepuiApp) -> str:
    rendered = app.screen.query_one(DetailPane).query_one("#detail-body", Static).render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def mark_shown(app: KeepuiApp) -> bool:
    mark = app.screen.query_one("#search-history", Label)
    return bool(mark.display and mark.region.area)


async def test_toggle_searches_older_versions_and_says_so(history_app: KeepuiApp) -> None:
    app = history_app
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"zanzibar", "enter")
        await settle(app, pilot)
        now = current(app)
        assert not now.q.history and "plan" not in now.ids
        assert tab_titles(app) == ["1 zanzibar"]

        assert not mark_shown(app)
        await pilot.press("ctrl+y")  # in LIST mode too: toggle, then `/` and Enter
        bar = app.screen.query_one(SearchBar)
        assert bar.history and mark_shown(app)
        await pilot.press("slash", "enter")  # back in the bar, the query kept
        await settle(app, pilot)
        then = current(app)
        assert then is not now and then.q == FindQuery("zanzibar", [], 20, history=True)
        assert tab_titles(app) == ["1 zanzibar", "2 zanzibar · +history"]
        hit = then.hits[0]
        assert hit.id == "plan" and hit.matched == "plan@V{1}"
        assert hit.archived == {"version": 1, "of": 2, "text_differs": True}
        title = str(then.get_row_at(0)[1]).rstrip()
        assert title.endswith("plan older v1 of 2")
        assert "matched v1 of 2; the current text differs" in detail_text(app)

        # the toggle stays on for the next searches until Ctrl+Y again (here in the bar)
        await pilot.press("slash", "ctrl+y")
        assert app.focused is app.screen.query_one("#search-input", Input)
        assert not bar.history and not mark_shown(app)


async def test_inline_token_and_tags_that_differ(seeded: Workbench) -> None:
    seeded.put(OLD, id="plan", tags=["status=draft"])
    seeded.put(OLD, id="plan", tags=["status=reviewed"])
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"zanzibar tag:status=draft", "enter")
        await settle(app, pilot)
        assert "plan" not in current(app).ids  # the draft is no longer current
        await pilot.press("end", *" history:on", "enter")  # End refines the query run
        await settle(app, pilot)
        pane = current(app)
        assert pane.q.history and not app.screen.query_one(SearchBar).history
        assert pane.ids == ["plan"]
        assert pane.hits[0].archived == {"version": 1, "of": 2, "text_differs": False}
        assert tab_titles(app)[-1] == "2 zanzibar · +history · status=draft"
        assert "matched v1 of 2; the current tags differ" in detail_text(app)


@duckdb_only("the TUI alone: the history list hands the stored search back")
async def test_rerun_from_history_keeps_the_flag(history_app: KeepuiApp) -> None:
    app = history_app
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+y", *"zanzibar", "enter")
        await settle(app, pilot)
        assert current(app).q.history
        history = app.screen.query_one(HistoryList)
        await pilot.press("tab", "tab", "tab")  # bar → hits → detail → history
        assert app.focused is history and history.records[0].q.history
        await pilot.press("enter")
        await settle(app, pilot)
        pane = current(app)
        assert pane.q.history and pane.hits[0].archived is not None
        assert tab_titles(app)[-1] == "2 zanzibar · +history"
        # the bar shows that search inline, the toggle off: Enter runs the same search
        box = app.screen.query_one("#search-input", Input)
        assert box.value == "zanzibar history:on"
        assert not app.screen.query_one(SearchBar).history


@duckdb_only("the TUI alone: keys, footer, palette and help")
async def test_footer_and_help_name_the_key(history_app: KeepuiApp) -> None:
    app = history_app
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        shown = {
            b.binding.key: b.binding.description
            for b in app.active_bindings.values()
            if b.binding.show
        }
        assert shown.get("ctrl+y") == "History"  # in the footer while the bar has the cursor
        names = [name for name, _, _ in KeepuiCommands(app.screen).commands()]
        assert HISTORY_TOOLTIP in names
        await pilot.press("f1")
        await pilot.pause()
        help_text = str(app.screen.query_one("Markdown")._markdown)  # type: ignore[attr-defined]
        assert "Ctrl+Y" in help_text and "history:on" in help_text


def test_history_token_round_trips() -> None:
    q = parse_search("zanzibar history:on n:5")
    assert q == FindQuery("zanzibar", [], 5, history=True)
    assert format_search(q) == "zanzibar n:5 history:on"
    assert parse_search(format_search(q)) == q
    assert parse_search("zanzibar", history=True).history
    assert not parse_search("zanzibar history:off", history=True).history
    with pytest.raises(UsageError, match="history:maybe"):
        parse_search("zanzibar history:maybe")
