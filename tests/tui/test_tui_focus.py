"""The focus model: input mode (the search bar) and list mode (the hits), keys only."""

from __future__ import annotations

from textual.widgets import Input
from tui_helpers import burst, screen_text, settle

from keepui.app import KeepuiApp
from keepui.screens.document import DocumentScreen
from keepui.screens.main import MainScreen
from keepui.widgets.result_tabs import ResultTabs


def _box(app: KeepuiApp) -> Input:
    return app.screen.query_one("#search-input", Input)


def _footer_mode(app: KeepuiApp) -> str:
    return screen_text(app).splitlines()[-1].split()[0]


async def test_after_a_search_the_cursor_is_on_the_first_hit(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert _footer_mode(app) == "INPUT"
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and app.focused is pane and pane.cursor_row == 0
        assert _footer_mode(app) == "LIST"


async def test_keys_only_from_the_bar_into_the_hits_and_open_one(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        # back in the bar to refine, then Down into the hits and Enter, in one burst
        await pilot.press("slash", "down", "down", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen)
        assert app.screen.doc_id == pane.hits[1].id
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("slash", "tab", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen)
        assert app.screen.doc_id == pane.hits[1].id  # the cursor stayed where it was


async def test_slash_focuses_the_bar_and_types_nothing(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")  # a habit from list mode, in an empty bar: swallowed
        assert _box(app).value == ""
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        await pilot.press("slash", *" backups")  # typed at once after `/`: all in the bar
        assert app.focused is _box(app)
        assert _box(app).value == "storage backups"
        await pilot.press(*" a/b")  # inside a query `/` is a letter (URLs, paths)
        assert _box(app).value == "storage backups a/b"


async def test_escape_leaves_the_bar(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        assert app.focused is not _box(app)
        assert _footer_mode(app) == "LIST"
        await pilot.press(*"jkz")  # list mode: letters are keys, not text
        assert _box(app).value == ""
        assert isinstance(app.screen, MainScreen)
        await pilot.press("slash", *"rivers", "escape")
        assert _box(app).value == "rivers" and app.focused is not _box(app)


async def test_a_burst_after_slash_lands_in_the_bar(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        await burst(app, pilot, "slash", *" rivers")
        assert _box(app).value == "storage rivers"
        assert len(app.screen.query_one(ResultTabs).panes) == 1  # `r` did not re-run


async def test_a_burst_down_enter_opens_the_hit(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        await burst(app, pilot, "slash", "down", "j", "enter")
        assert isinstance(app.screen, DocumentScreen)
        assert app.screen.doc_id == pane.hits[1].id
