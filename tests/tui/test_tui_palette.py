"""The command palette: bounded fuzzy matching (a 5,000-character past query), start-screen keys."""

from __future__ import annotations

import time

from textual.command import CommandInput, CommandList, CommandPalette
from tui_helpers import settle

from keepui.tui.app import KeepuiApp
from keepui.tui.commands import LABEL_MAX, BoundedMatcher, KeepuiCommands
from keepui.tui.screens.forms import FileModal
from keepui.tui.widgets.history_list import HistoryList
from keepui_engine import FindQuery, Workbench

LONG = " ".join(f"storage{i % 7} engine backup replication" for i in range(150))[:5000]


def test_matching_a_long_label_is_linear() -> None:
    label = "a" * 5000
    matcher = BoundedMatcher("a" * 40)
    started = time.perf_counter()
    assert matcher.match(label) > 0
    assert matcher.match("b" * 5000) == 0
    assert time.perf_counter() - started < 0.05
    assert BoundedMatcher("rrs").positions("Re-run: rivers") == [0, 3, 13]
    assert BoundedMatcher("rivers").match("Re-run: rivers") > BoundedMatcher("rrs").match(
        "Re-run: rivers"
    )


def test_markup_in_a_label_is_shown_as_typed() -> None:
    content = BoundedMatcher("bold").highlight("Re-run: [bold]x[/bold]")
    assert content.plain == "Re-run: [bold]x[/bold]"


async def test_palette_opens_with_a_5000_character_query_in_history(seeded: Workbench) -> None:
    assert len(LONG) == 5000
    seeded.record_search(FindQuery(LONG), ["storage"])
    seeded.record_search(FindQuery("rivers"), ["rivers"])
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one(HistoryList).option_count == 2
        started = time.perf_counter()
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert isinstance(app.screen, CommandPalette)
        palette = app.screen
        palette.query_one(CommandInput).value = "storage engine backup"
        await settle(app, pilot)
        commands = palette.query_one(CommandList)
        assert commands.option_count >= 1
        prompts = [
            str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)
        ]
        assert any(p.startswith("Re-run: storage0 engine") for p in prompts)
        assert all(len(p.split("\n")[0]) <= LABEL_MAX for p in prompts)
        assert time.perf_counter() - started < 5
        await pilot.press("escape")
        await settle(app, pilot)
        # opened again (history is stored): still quick
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        app.screen.query_one(CommandInput).value = "re-run"
        await settle(app, pilot)
        assert app.screen.query_one(CommandList).option_count >= 2


async def test_start_screen_palette_reaches_the_write_actions(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.focused is not None and app.focused.id == "search-input"
        names = [name for name, _, _ in KeepuiCommands(app.screen).commands()]
        for wanted in ("Note", "File", "Tags", "Delete", "Purge", "Edit", "History"):
            assert wanted in names, wanted
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        app.screen.query_one(CommandInput).value = "file"
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, FileModal)
