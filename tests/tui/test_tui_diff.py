"""The diff screen: change k of N, `n`/`p` scroll sideways to the changed words, `u` unified."""

from __future__ import annotations

import pytest
from textual.widgets import Static
from tui_helpers import screen_text, settle

from keepui.app import KeepuiApp
from keepui.screens.diff import DiffScreen
from keepui.screens.document import DocumentScreen
from keepui.widgets.diff_view import DiffPane, DiffView, unified_lines
from keepui_engine import DiffRow, Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


PAD = "x" * 150


async def open_diff(seeded: Workbench, size: tuple[int, int] = (100, 30)) -> KeepuiApp:
    old = "\n".join(f"line {i} {PAD} end" for i in range(120))
    new = "\n".join(
        f"line {i} {PAD} END" if i in (30, 90) else f"line {i} {PAD} end" for i in range(120)
    )
    seeded.put(old, id="wide")
    seeded.put(new, id="wide")
    return KeepuiApp(seeded, poll_interval=None)


def position(app: KeepuiApp) -> str:
    return str(app.screen.query_one("#diff-tags", Static).render())


async def test_n_and_p_say_which_change_and_scroll_to_its_words(seeded: Workbench) -> None:
    app = await open_diff(seeded)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(seeded, "wide"))
        await settle(app, pilot)
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen)
        view = app.screen.query_one(DiffView)
        left = app.screen.query_one("#diff-left", DiffPane)
        right = app.screen.query_one("#diff-right", DiffPane)
        assert "change 1 of 2" in position(app)  # before the first: counted as the first
        await pilot.press("n")
        await settle(app, pilot)
        assert view.top == 28 and "change 1 of 2" in position(app)
        # the changed word sits at column 160: both panes scrolled sideways to it
        assert left.scroll_x > 100 and round(right.scroll_x) == round(left.scroll_x)
        assert "END" in screen_text(app)
        await pilot.press("n")
        await settle(app, pilot)
        assert view.top == 88 and "change 2 of 2" in position(app)
        await pilot.press("p")
        await settle(app, pilot)
        assert view.top == 28 and "change 1 of 2" in position(app)


async def test_u_switches_to_the_unified_view_and_back(seeded: Workbench) -> None:
    app = await open_diff(seeded)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(seeded, "wide"))
        await settle(app, pilot)
        await pilot.press("d")
        await settle(app, pilot)
        await pilot.press("n", "u")
        await settle(app, pilot)
        view = app.screen.query_one(DiffView)
        unified = app.screen.query_one("#diff-unified", DiffPane)
        assert view.unified and unified.display and app.focused is unified
        assert not app.screen.query_one("#diff-sides").display
        assert "unified" in position(app)
        text = screen_text(app)
        assert "− " in text and "+ " in text  # the old line, then the new one
        await pilot.press("n")
        await settle(app, pilot)
        assert view.top == 88 and "change 2 of 2" in position(app)
        await pilot.press("u")
        await settle(app, pilot)
        assert not view.unified and "side by side" in position(app) and view.top == 88


def test_unified_lines_put_an_edit_as_old_then_new() -> None:
    rows = [
        DiffRow("equal", 1, "a", 1, "a"),
        DiffRow("change", 2, "b old", 2, "b new", [[2, 5]], [[2, 5]]),
        DiffRow("delete", 3, "c", None, ""),
        DiffRow("insert", None, "", 3, "d"),
    ]
    lines, starts = unified_lines(rows)
    assert [(ln.sign, ln.number, ln.text) for ln in lines] == [
        (" ", 1, "a"), ("−", 2, "b old"), ("+", 2, "b new"), ("−", 3, "c"), ("+", 3, "d"),
    ]  # fmt: skip
    assert starts == [0, 1, 3, 4]
