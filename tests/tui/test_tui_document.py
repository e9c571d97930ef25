"""Document screen: version timeline, diff screen (synchronised panes), parts tree, similar."""

from __future__ import annotations

import pytest
from textual.widgets import Static
from tui_helpers import STORAGE_V1, STORAGE_V2, duckdb_only, search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.diff import DiffScreen
from keepui.tui.screens.document import DocumentScreen, SimilarList
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.diff_view import DiffPane, DiffView
from keepui.tui.widgets.parts_tree import PartsTree
from keepui.tui.widgets.version_timeline import VersionTimeline
from keepui_engine import Part, Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


def text_of(app: KeepuiApp) -> str:
    return str(app.screen.query_one("#doc-text", Static).render())


async def open_document(app: KeepuiApp, pilot, doc_id: str) -> DocumentScreen:  # type: ignore[no-untyped-def]
    screen = app.screen
    assert isinstance(screen, MainScreen)
    await app.push_screen(DocumentScreen(screen.wb, doc_id))
    await settle(app, pilot)
    assert isinstance(app.screen, DocumentScreen)
    return app.screen


async def test_enter_on_a_hit_opens_the_document(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "rivers")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen) and app.screen.doc_id == "rivers"
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_timeline_lists_every_version(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_document(app, pilot, "storage")
        timeline = screen.query_one(VersionTimeline)
        assert [(v.version, v.change) for v in timeline.versions] == [(2, "both"), (1, "created")]
        row = [str(cell) for cell in timeline.get_row_at(0)]
        assert row[3] == "2026-11-02 09:02" and row[5] == "both"
        assert text_of(app) == STORAGE_V2
        await pilot.press("j")
        await settle(app, pilot)
        assert text_of(app) == STORAGE_V1
        header = str(screen.query_one("#doc-header", Static).render())
        # the header and tags follow the version cursor: version 1 had no status tag yet
        assert "version 1 of 2 (@V{1})" in header and "status=decided" not in header
        await pilot.press("k")
        await settle(app, pilot)
        header = str(screen.query_one("#doc-header", Static).render())
        assert "version 2 of 2 (current)" in header and "status=decided" in header


async def test_diff_previous_with_d(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_document(app, pilot, "storage")
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen)
        diff = app.screen.diff
        assert (diff.left_version, diff.right_version) == (1, 2)
        assert (diff.added, diff.removed, diff.changed) == (1, 0, 1)
        assert "tags: +status=decided" in str(app.screen.query_one("#diff-tags", Static).render())
        await pilot.press("escape")
        assert isinstance(app.screen, DocumentScreen)


async def test_mark_two_versions_then_diff(seeded: Workbench) -> None:
    seeded.put("A third version.", id="storage")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_document(app, pilot, "storage")
        await pilot.press("G", "space", "g", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen)
        assert (app.screen.diff.left_version, app.screen.diff.right_version) == (1, 3)


async def test_single_version_cannot_be_diffed(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_document(app, pilot, "rivers")
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen)


@duckdb_only("layout: the panes scroll together")
async def test_diff_panes_scroll_together(seeded: Workbench) -> None:
    old = "\n".join(f"line {i}" for i in range(200))
    new = "\n".join(f"line {i}" if i % 40 else f"line {i} edited" for i in range(200))
    seeded.put(old, id="long")
    seeded.put(new, id="long")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await open_document(app, pilot, "long")
        await pilot.press("d")
        await settle(app, pilot)
        left = app.screen.query_one("#diff-left", DiffPane)
        right = app.screen.query_one("#diff-right", DiffPane)
        assert app.focused is left
        left.scroll_to(y=50, animate=False)
        await pilot.pause()
        assert round(right.scroll_y) == 50
        right.scroll_to(y=10, animate=False)
        await pilot.pause()
        assert round(left.scroll_y) == 10
        view = app.screen.query_one(DiffView)
        await pilot.press("n")
        await pilot.pause()
        assert view.top == 38 and round(right.scroll_y) == 38
        await pilot.press("p")
        await pilot.pause()
        assert view.top == 0
        await pilot.press("G")
        await pilot.pause()
        assert round(right.scroll_y) == round(left.max_scroll_y) > 0


async def test_diff_highlights_changed_words(seeded: Workbench) -> None:
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DiffScreen(seeded.diff("storage")))
        await pilot.pause()
        right = app.screen.query_one("#diff-right", DiffPane)
        line = right.render_line(1)
        word = right.get_component_rich_style("diff-pane--added-word")
        marked = [seg.text for seg in line if seg.style and seg.style.bold and word.bold]
        assert " and every version" in "".join(marked)
        filler = app.screen.query_one("#diff-left", DiffPane).render_line(2)
        assert "".join(seg.text for seg in filler).strip() == ""


@duckdb_only("the parts are faked: the store plays no part")
async def test_parts_tree_shows_parts_and_their_text(
    seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    def part(n: int, title: str | None, where: str, text: str, summary: str) -> Part:
        return Part("storage", n, f"storage@P{{{n}}}", "heading", title, where, text, summary)

    parts = [
        part(1, "Decision", "chars 0-28", "We chose DuckDB.", "s"),
        part(2, None, "chars 29-80", "One file.", "One file"),
    ]
    monkeypatch.setattr(seeded, "parts", lambda address, offset=None: parts)
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_document(app, pilot, "storage")
        tree = screen.query_one(PartsTree)
        assert str(tree.root.label) == "parts (2)"
        assert [str(n.label) for n in tree.root.children] == ["1 Decision", "2 One file"]
        tree.focus()
        await pilot.press("j")
        await pilot.pause()
        assert text_of(app) == "Decision\n\nWe chose DuckDB."  # the whole title, then the text
        await pilot.press("G")
        await pilot.pause()
        assert text_of(app) == "One file."
        border = screen.query_one("#doc-content").border_title
        assert border == "part 2 of 2 · heading · chars 29-80"


async def test_similar_items_open(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_document(app, pilot, "bm25")
        similar = screen.query_one(SimilarList)
        assert similar.option_count > 0 and "bm25" not in [h.id for h in screen.similar]
        similar.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen)
        assert app.screen.doc_id == screen.similar[0].id
