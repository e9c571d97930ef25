"""The focus model: input mode (the search bar) and list mode (the hits), keys only."""

from __future__ import annotations

import pytest
from textual.widgets import Input
from tui_helpers import burst, screen_text, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.confirm import ConfirmModal
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import NotFound, Workbench


def _box(app: KeepuiApp) -> Input:
    return app.screen.query_one("#search-input", Input)


def _footer_mode(app: KeepuiApp) -> str:
    return screen_text(app).splitlines()[-1].split()[0]


async def test_after_a_search_the_focus_stays_in_the_bar(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert _footer_mode(app) == "INPUT"
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.cursor_row == 0
        assert app.focused is _box(app) and _footer_mode(app) == "INPUT"
        assert _box(app).selected_text == "storage"  # the next letter starts a new query
        await pilot.press("down")  # the user moves the focus: into the hits, on the first
        assert app.focused is pane and pane.cursor_row == 0
        assert _footer_mode(app) == "LIST"


async def test_keys_only_from_the_bar_into_the_hits_and_open_one(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        await pilot.press("down", "down", "enter")
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
        await pilot.press("slash", *"backups")  # after Enter: `/` then the next query
        assert app.focused is _box(app)
        assert _box(app).value == "backups"
        await pilot.press("end", *" and more")  # End (or →) refines instead
        assert _box(app).value == "backups and more"
        await pilot.press(*" a/b")  # inside a query `/` is a letter (URLs, paths)
        assert _box(app).value == "backups and more a/b"


async def test_three_queries_typed_back_to_back_all_run(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        # no wait between them: results arriving never move the focus out of the bar
        await burst(app, pilot, *"storage", "enter", "slash", *"key backup", "enter")
        await burst(app, pilot, *"rivers", "enter", *"vector index", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)  # no editor, queue or facets opened
        # every search ran and is in the history, in order; one still running when the next
        # started was superseded (no tab), so the last tab is the last query's
        ran = [r.q.query for r in reversed(app.screen.history)]
        assert ran == ["storage", "key backup", "rivers", "vector index"]
        queries = [p.q.query for p in app.screen.query_one(ResultTabs).panes]
        assert queries[-1] == "vector index" and set(queries) <= set(ran)
        assert app.focused is _box(app) and _box(app).value == "vector index"


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
        await pilot.press("down")  # into the hits: `/` from there, then a burst
        await burst(app, pilot, "slash", *" rivers")
        assert _box(app).value == " rivers"  # the finished query was selected: replaced
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


async def test_a_destructive_key_never_acts_before_its_dialog_had_focus(
    app: KeepuiApp, seeded: Workbench
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"storage", "enter")
        await settle(app, pilot)
        await pilot.press("down")  # into the hits
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.current_hit is not None
        doc = pane.current_hit.id
        versions = len(seeded.history(doc))
        # a word typed into what the typist took for the bar: `x` asks, `y` came before the
        # dialog had the focus and must not answer it
        await burst(app, pilot, "x", "y", "enter")
        assert isinstance(app.screen, ConfirmModal)
        assert len(seeded.history(doc)) == versions
        await pilot.press("y")  # typed with the dialog in front: it answers
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        if versions > 1:
            assert len(seeded.history(doc)) == versions - 1
        else:
            with pytest.raises(NotFound):
                seeded.history(doc)
