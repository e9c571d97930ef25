"""The diff screen: change k of N (a cursor `n`/`p` moves over every change), sideways scrolling
to the changed words, `u` unified, `w` wrap, and lines paired by similarity in both views."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import burst, duckdb_only, screen_text, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.diff import DiffScreen
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.widgets.diff_view import DiffPane, DiffView, unified_lines, wrap_starts
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


def test_wrap_starts_break_after_a_space_or_cut_a_long_word() -> None:
    assert wrap_starts("short", 10) == [0]
    assert wrap_starts("aaaa bbbb cccc", 10) == [0, 10]  # "aaaa bbbb " then "cccc"
    assert wrap_starts("aaaa bbbbbbbbbbbb", 10) == [0, 5, 15]
    assert wrap_starts("x" * 25, 10) == [0, 10, 20]


async def diff_by_keys(app: KeepuiApp, pilot: Pilot[Any], word: str) -> DiffView:
    """Find the document by a word only it holds, open it and diff it with its previous
    version, all by keys."""
    await pilot.press(*f"{word} mode:bm25", "enter")
    await settle(app, pilot)
    await pilot.press("down", "enter")  # into the hits, open the first
    await settle(app, pilot)
    assert isinstance(app.screen, DocumentScreen)
    await pilot.press("d")
    await settle(app, pilot)
    assert isinstance(app.screen, DiffScreen)
    return app.screen.query_one(DiffView)


def pane(app: KeepuiApp, name: str) -> DiffPane:
    return app.screen.query_one(f"#diff-{name}", DiffPane)


SEVEN = (5, 15, 25, 35, 45, 50, 55)
"""Lines edited in the 60-line document: the last three share the final screen."""


@duckdb_only("layout and keys: the store only holds the two versions")
async def test_n_and_p_visit_every_change_even_on_the_final_screen(seeded: Workbench) -> None:
    old = [f"zebrafish line {i}" for i in range(60)]
    new = [f"zebrafish line {i} edited" if i in SEVEN else line for i, line in enumerate(old)]
    seeded.put("\n".join(old), id="seven")
    seeded.put("\n".join(new), id="seven")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        view = await diff_by_keys(app, pilot, "zebrafish")
        assert "change 1 of 7" in position(app) and view.current is None

        async def press(key: str, k: int) -> None:
            await pilot.press(key)
            await settle(app, pilot)
            assert f"change {k} of 7 " in position(app) + " " and view.current == k - 1
            # the change is on screen and its gutter marked, even where the view cannot
            # bring it to the top (the last three share the final screen)
            shown = pane(app, "unified" if view.unified else "left")
            line = shown.lines[shown.marked.start]
            assert line.text == f"zebrafish line {SEVEN[k - 1]}"
            assert f"line {SEVEN[k - 1]} edited" in screen_text(app)

        for k in range(1, 8):
            await press("n", k)
        assert pane(app, "left").scroll_y == pane(app, "left").max_scroll_y > 0  # final screen
        await press("n", 7)  # no change past the last
        for k in range(6, 0, -1):
            await press("p", k)
        await press("p", 1)
        assert view.top == 3
        await pilot.press("u")  # the cursor stays on its change
        await settle(app, pilot)
        assert "change 1 of 7   ·   unified" in position(app)
        for k in range(2, 8):
            await press("n", k)
        unified = pane(app, "unified")
        assert unified.scroll_y == unified.max_scroll_y > 0
        for k in range(6, 0, -1):
            await press("p", k)
        # scrolled away from the cursor's change, the counter follows the view again
        await pilot.press("G")
        await settle(app, pilot)
        assert "change 4 of 7" in position(app)
        await press("n", 5)
        # keys typed at once: a wrap's deferred scroll does not undo the moves after it
        await burst(app, pilot, "w", "n", "n", "p")
        assert "change 6 of 7   ·   unified, wrap on" in position(app)
        assert "line 50 edited" in screen_text(app)


WIDE_WORDS = " ".join(["alpha beta gamma delta epsilon zeta eta theta"] * 5)
"""A line of some 230 characters (past the right edge at 100 columns)."""


async def open_wide(seeded: Workbench, app_size: tuple[int, int] = (100, 30)) -> KeepuiApp:
    old = [f"quokka {i} {WIDE_WORDS}" for i in range(40)]
    new = list(old)
    new[10] = old[10] + " APPENDED"  # a word past the end of the old line, on the right only
    new[30] = old[30].replace("quokka", "QUOKKA", 1)  # a word at the start
    seeded.put("\n".join(old), id="wide-append")
    seeded.put("\n".join(new), id="wide-append")
    return KeepuiApp(seeded, poll_interval=None)


@duckdb_only("layout and keys: the store only holds the two versions")
async def test_a_change_past_the_right_edge_scrolls_into_view(seeded: Workbench) -> None:
    app = await open_wide(seeded)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await diff_by_keys(app, pilot, "quokka")
        left, right = pane(app, "left"), pane(app, "right")
        assert "APPENDED" not in screen_text(app) and "wrap off" in position(app)
        await pilot.press("n")
        await settle(app, pilot)
        # the word sits past the old line's end: the panes still scroll that far, together
        assert left.scroll_x > 150 and round(right.scroll_x) == round(left.scroll_x)
        assert "APPENDED" in screen_text(app)
        await pilot.press("n")
        await settle(app, pilot)
        assert left.scroll_x == right.scroll_x == 0 and "QUOKKA 30" in screen_text(app)
        await pilot.press("u")
        await settle(app, pilot)
        unified = pane(app, "unified")
        assert unified.scroll_x == 0 and "+ QUOKKA 30" in screen_text(app)
        await pilot.press("p")
        await settle(app, pilot)
        assert unified.scroll_x > 150 and "APPENDED" in screen_text(app)
        assert "change 1 of 2" in position(app)


@duckdb_only("layout and keys: the store only holds the two versions")
async def test_w_wraps_long_lines_and_back(seeded: Workbench) -> None:
    app = await open_wide(seeded)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        view = await diff_by_keys(app, pilot, "quokka")
        left, right = pane(app, "left"), pane(app, "right")
        await pilot.press("n")
        await settle(app, pilot)
        assert left.scroll_x > 0
        await pilot.press("w")
        await settle(app, pilot)
        assert view.wrap and "wrap on" in position(app)
        # no sideways scrolling: every word is on screen, a long row as tall on both sides
        assert left.scroll_x == 0 and left.max_scroll_x == right.max_scroll_x == 0
        assert left.virtual_size.height == right.virtual_size.height > 4 * 40
        text = screen_text(app)
        assert "APPENDED" in text and "quokka 10 alpha" in text  # the change stays in view
        assert "change 1 of 2" in position(app)
        tall, top = left.virtual_size.height, view.top
        await pilot.resize_terminal(160, 30)  # wider: the lines wrap again, fewer pieces
        await settle(app, pilot)
        assert left.virtual_size.height == right.virtual_size.height < tall
        assert view.top == top and left.max_scroll_x == 0
        await pilot.press("n")
        await settle(app, pilot)
        assert "change 2 of 2" in position(app) and "QUOKKA 30 alpha" in screen_text(app)
        await pilot.press("u")
        await settle(app, pilot)
        unified = pane(app, "unified")
        assert "unified, wrap on" in position(app) and unified.max_scroll_x == 0
        assert "+ QUOKKA 30 alpha" in screen_text(app)
        await pilot.press("w")
        await settle(app, pilot)
        assert not view.wrap and "wrap off" in position(app)
        assert unified.virtual_size.height == 42 and unified.max_scroll_x > 50
        assert "+ QUOKKA 30 alpha" in screen_text(app)


@duckdb_only("the pairing is the engine's: the store only holds the two versions")
async def test_an_inserted_paragraph_does_not_take_an_edited_lines_place(
    seeded: Workbench,
) -> None:
    seeded.put("# Platypus notes\nSection 3\nBody of section three.\nEnd.", id="sections")
    seeded.put(
        "# Platypus notes\nNew paragraph added in version 4\nSection 3 revised\n"
        "Body of section 3.\nEnd.",
        id="sections",
    )
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await diff_by_keys(app, pilot, "platypus")
        assert "+1 −0 ~2" in str(app.screen.query_one("#diff-title", Static).render())
        lines = screen_text(app).splitlines()
        new_paragraph = next(ln for ln in lines if "New paragraph added in version 4" in ln)
        assert "Section" not in new_paragraph  # an added row: nothing on the left
        assert any("2 Section 3 " in ln and "3 Section 3 revised" in ln for ln in lines)
        assert any("Body of section three." in ln and "Body of section 3." in ln for ln in lines)
        await pilot.press("u")
        await settle(app, pilot)
        unified = [ln.strip("│ ") for ln in screen_text(app).splitlines()]
        start = unified.index("1   # Platypus notes")
        assert unified[start + 1 : start + 7] == [
            "2 + New paragraph added in version 4",
            "2 − Section 3",
            "3 + Section 3 revised",
            "3 − Body of section three.",
            "4 + Body of section 3.",
            "5   End.",
        ]
