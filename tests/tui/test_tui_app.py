"""The app shell: model warm-up after the first paint, themes, help, palette, errors, 80x24."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from textual.command import CommandInput, CommandPalette, Hit
from tui_helpers import screen_text, search, settle, submit

from keepui.tui import theming
from keepui.tui.app import KeepuiApp
from keepui.tui.commands import KeepuiCommands
from keepui.tui.messages import StoreStats
from keepui.tui.screens.error import ErrorModal
from keepui.tui.screens.help import HelpScreen
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import ProviderError, Stats, StoreError, Workbench


async def test_model_loads_after_the_first_paint(
    seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = KeepuiApp(seeded, poll_interval=None)
    seen: list[object] = []
    original = seeded.warm_up

    def warm_up() -> None:
        seen.append(app.screen)  # the main screen is already up when the model starts loading
        original()

    monkeypatch.setattr(seeded, "warm_up", warm_up)
    assert app.model_state == "loading"
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.screen.query_one(StatusBar)
        await settle(app, pilot)
        assert len(seen) == 1 and isinstance(seen[0], MainScreen)
        assert app.model_state == "ready"
        assert str(status.render()).startswith("model ready │ 5 items · 6 versions")


async def test_model_failure_is_reported(
    seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise ProviderError("the model files are missing. Reinstall.", "Embedding model missing")

    monkeypatch.setattr(seeded, "warm_up", broken)
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.model_state == "failed"
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.error_title == "Embedding model missing"
        await pilot.press("enter")
        assert isinstance(app.screen, MainScreen)
        assert "model failed" in str(app.screen.query_one(StatusBar).render())


async def test_every_tcss_file_is_loaded(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        loaded = {Path(path).name for path, _ in app.stylesheet.source}
        assert set(theming.THEME_FILES) <= loaded


def test_themes_dir_is_found() -> None:
    root = theming.themes_dir()
    assert all((root / name).is_file() for name in theming.THEME_FILES)
    for name in theming.THEME_FILES:
        text = (root / name).read_text()
        assert not re.search(r":[^;{}]*#[0-9a-fA-F]{3,8}\b", text), f"{name}: use theme variables"


async def test_theme_from_keepui_toml(seeded: Workbench) -> None:
    config = seeded.store / "keepui.toml"
    config.write_text(config.read_text() + '\n[tui]\ntheme = "keepui-light"\n')
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.theme == "keepui-light"
        assert app.theme_variables["match"] == theming.KEEPUI_LIGHT.variables["match"]


async def test_unknown_theme_falls_back(seeded: Workbench) -> None:
    config = seeded.store / "keepui.toml"
    config.write_text(config.read_text() + '\n[tui]\ntheme = "no-such-theme"\n')
    app = KeepuiApp(seeded, poll_interval=None)
    assert app.theme == theming.DEFAULT_THEME and app.theme_problem is not None


async def test_textual_themes_work_too(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.theme = "textual-light"
        await pilot.pause()
        assert app.theme_variables["diff-added"] == app.theme_variables["success-muted"]


async def test_f1_help_and_escape(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_palette_reaches_actions_themes_and_history(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        provider = KeepuiCommands(app.screen)
        names = [name for name, _, _ in provider.commands()]
        for wanted in ("Search", "Compare", "Re-run", "Close tab", "Note", "File", "Tags",
                       "Edit", "Copy id", "Copy JSON", "Delete", "Purge", "Help",
                       "Theme: keepui-light", "Re-run: storage"):  # fmt: skip
            assert wanted in names, wanted
        assert "Down" not in names
        theme = next(cb for name, _, cb in provider.commands() if name == "Theme: keepui-light")
        theme()
        assert app.theme == "keepui-light"
        hits = [h async for h in provider.search("compare")]
        assert hits and isinstance(hits[0], Hit) and "Compare" in str(hits[0].match_display)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        palette = app.screen
        palette.query_one(CommandInput).value = "re-run: storage"
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert len(app.screen.query_one(ResultTabs).panes) == 2


async def test_errors_from_a_search_show_a_dialog(
    app: KeepuiApp, seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_find(*args: object, **kwargs: object) -> None:
        raise StoreError("cannot read the index. Restart keepui.", "Store error")

    monkeypatch.setattr(seeded, "find_query", broken_find)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await submit(app, pilot, "storage")
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.error_title == "Store error"
        assert "Restart keepui" in screen_text(app)


async def test_unexpected_errors_have_a_generic_title(
    app: KeepuiApp, seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_find(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(seeded, "find_query", broken_find)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await submit(app, pilot, "storage")
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.error_title == "Unexpected error" and "RuntimeError: boom" in (
            app.screen.message
        )
        assert "Traceback" not in screen_text(app)


async def test_usable_at_80x24(app: KeepuiApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert not app.screen.query_one(HistoryList).display
        await search(app, pilot, "storage")
        text = screen_text(app)
        assert "score" in text and "storage" in text and "/ Search" in text
        await pilot.press("h")
        assert app.screen.query_one(HistoryList).display
        await pilot.press("enter")
        await settle(app, pilot)
        assert "versions" in screen_text(app)


async def test_stats_posted_from_another_thread_reach_the_screens(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        base = app.stats
        assert base is not None
        changed = Stats(base.store, base.items + 1, base.versions + 1, 0, 0, "m", 1)
        thread = threading.Thread(target=app.post_message, args=(StoreStats(changed),))
        thread.start()
        thread.join()
        await settle(app, pilot)
        assert app.stats == changed
        assert "6 items · 7 versions" in str(app.screen.query_one(StatusBar).render())


async def test_poll_interval_sets_a_timer(seeded: Workbench) -> None:
    app = KeepuiApp(seeded, poll_interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert any(t._interval == 0.5 for t in app._timers)


async def test_heap_is_frozen_while_the_app_runs(app: KeepuiApp) -> None:
    import gc

    gc.unfreeze()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.model_state == "ready" and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
