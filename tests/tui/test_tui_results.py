"""Readable results: rows, tab labels, current versions after an edit, the TUI's words, naming
and exporting a tab, toasts, the smallest window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static, Tabs
from textual.widgets._toast import Toast
from tui_helpers import duckdb_only, screen_text, search, settle, submit

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.diff import DiffScreen
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.error import ErrorModal
from keepui.tui.screens.export import ExportModal, NameModal
from keepui.tui.screens.flows import FlowsScreen
from keepui.tui.screens.too_small import TooSmall
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.status_bar import StatusBar
from keepui.tui.widgets.version_timeline import VersionTimeline
from keepui_engine import FindQuery, Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


EUROPE = "file:///home/ana/projects/research/notes/geography/europe/rivers.md"
ASIA = "file:///home/ana/projects/research/notes/geography/asia/rivers.md"


def detail_text(app: KeepuiApp) -> str:
    return str(app.screen.query_one(DetailPane).query_one("#detail-body", Static).render())


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 15)])
async def test_rows_lead_with_a_title_and_keep_files_apart(
    seeded: Workbench, size: tuple[int, int]
) -> None:
    seeded.put("Rivers of Europe: the Danube and the Rhine.", id=EUROPE)
    seeded.put("Rivers of Asia: the Mekong and the Yangtze.", id=ASIA)
    seeded.tag("rivers", tags=["title=Rivers survey"], remove=[])
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "rivers europe asia mode:dense dedup:off")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        rows = {h.id: pane.get_row_at(i)[1].plain for i, h in enumerate(pane.hits)}
        assert rows["rivers"].startswith("Rivers survey  rivers")
        assert rows[EUROPE].startswith("rivers.md  ") and rows[ASIA].startswith("rivers.md  ")
        assert rows[EUROPE] != rows[ASIA]  # the ids are cut in the middle, where they differ
        text = screen_text(app)
        header = next(line for line in text.splitlines() if "title · id" in line)
        for column in pane.rows_layout.keys:  # every column fits, scores included
            assert column in header
        assert ("bm25" in header) == (size[0] >= 80)


async def test_after_a_tag_edit_the_hit_is_the_current_version(
    app: KeepuiApp, seeded: Workbench
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "rivers danube")
        await search(app, pilot, "meeting notes")
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        tabs = app.screen.query_one(ResultTabs)
        first, second = tabs.panes
        assert tabs.current is first and first.current_hit is not None
        assert first.current_hit.id == "rivers"
        await pilot.press("t")
        await settle(app, pilot)
        box = app.screen.query_one("#tags-input", Input)
        box.value += " sea=north"
        await pilot.press("enter")
        await settle(app, pilot)
        hit = first.current_hit
        assert hit is not None and hit.version == 0 and hit.tags["sea"] == "north"
        assert "sea=north" in detail_text(app)
        assert second.stale  # refreshed when shown again
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert not second.stale


async def test_a_hit_on_an_older_version_names_the_current_one(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage table mode:dense history:on")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.current_hit is not None
        assert pane.current_hit.matched == "storage@V{1}"
        text = detail_text(app)
        assert "matched v1 of 2; the current text differs" in text
        assert "the current one is v2 of 2" in text
        assert "status=decided" in text


@duckdb_only("layout: the tab bar scrolls to the active tab")
async def test_tab_labels_carry_filters_and_the_active_tab_stays_in_view(app: KeepuiApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for word in ("storage", "rivers", "search", "meeting", "vector", "backups", "danube"):
            await search(app, pilot, f"{word} mode:bm25")
        tabs = app.screen.query_one(ResultTabs)
        bar = tabs.query_one(Tabs)
        assert str(bar.active_tab.label) == "7 danube · bm25" if bar.active_tab else False

        def active_in_view() -> bool:
            tab = bar.active_tab
            scroll = bar.query_one("#tabs-scroll")
            return tab is not None and scroll.region.contains_region(tab.region)

        assert active_in_view()
        for _ in range(6):
            await pilot.press("left_square_bracket")
            await settle(app, pilot)
            assert active_in_view()
        assert tabs.current is tabs.panes[0]


async def test_messages_use_the_search_bar_words(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await submit(app, pilot, "storage since:yesterday")
        assert isinstance(app.screen, ErrorModal)
        assert "since:yesterday is not an ISO-8601 date" in app.screen.message
        assert "--since" not in screen_text(app)
        await pilot.press("escape")
        await search(app, pilot, "storage min:0.99")
        status = str(app.screen.query_one(StatusBar).render())  # where search notes go
        assert "below min:0.99" in status and "--" not in status


async def test_enter_opens_the_hit_at_what_matched(seeded: Workbench) -> None:
    filler = "word " * 300
    text = (
        f"# Glaciers\nIce sheets. {filler}\n\n# Deserts\nDunes, sand and a dry moraine. {filler}\n"
    )
    seeded.put(text, id="handbook")
    seeded.put("A later rewrite with no parts.", id="handbook")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+y", *"dry moraine", "enter")  # only the older version says it
        await settle(app, pilot)
        await pilot.press("down")  # into the hits
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.current_hit is not None
        hit = pane.current_hit
        assert hit.id == "handbook" and hit.matched == "handbook@V{1}@P{2}"
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        timeline = screen.query_one(VersionTimeline)
        assert timeline.current is not None and timeline.current.offset == 1
        header = str(screen.query_one("#doc-header", Static).render())
        assert "version 1 of 2 (@V{1})" in header
        tree = screen.query_one("#parts")
        node = tree.cursor_node  # type: ignore[attr-defined]
        assert node is not None and node.data.part == 2
        assert str(screen.query_one("#doc-content").border_title).startswith("part 2 of 2")
        body = screen.query_one("#doc-text", Static).render()
        marked = {body.plain[s.start : s.end].lower() for s in body.spans}  # type: ignore[union-attr]
        assert {"dry", "moraine"} <= marked


async def test_name_and_export_a_tab(app: KeepuiApp, tmp_path: Path) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage mode:bm25")
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, NameModal)
        app.screen.query_one("#tab-name", Input).value = "storage study"
        await pilot.press("enter")
        await settle(app, pilot)
        bar = app.screen.query_one(ResultTabs).query_one(Tabs)
        assert bar.active_tab is not None
        assert str(bar.active_tab.label) == "1 storage study · bm25"
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        for name in ("out.json", "out.md"):
            await pilot.press("s")
            await settle(app, pilot)
            assert isinstance(app.screen, ExportModal)
            app.screen.query_one("#export-path", Input).value = str(tmp_path / name)
            await pilot.press("enter")
            await settle(app, pilot)
        doc = json.loads((tmp_path / "out.json").read_text())
        assert doc["schema"] == 1 and doc["name"] == "storage study"
        assert doc["search"] == "storage mode:bm25"
        assert [h["id"] for h in doc["hits"]] == pane.ids
        first = doc["hits"][0]
        assert first["score"] == pane.hits[0].score and first["summary"] == pane.hits[0].summary
        assert "bm25" in first["scores"] and first["title"]
        markdown = (tmp_path / "out.md").read_text()
        assert markdown.startswith("# storage study\n")
        assert f"| 1 | {first['title']} | `{pane.hits[0].matched}` |" in markdown
        assert any("exported" in n.message for n in app._notifications)


@duckdb_only("a file-system error, before the store")
async def test_export_to_a_missing_folder_says_so(app: KeepuiApp, tmp_path: Path) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        await pilot.press("s")
        await settle(app, pilot)
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "no" / "x.md")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal) and app.screen.error_title == "Export failed"


@duckdb_only("layout only")
async def test_toasts_stay_above_the_queue_line(app: KeepuiApp) -> None:
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("a note that would cover the queue line")
        await settle(app, pilot)
        toast = app.screen.query_one(Toast)
        queue = app.screen.query_one("#queue-status")
        assert toast.region.bottom <= queue.region.y


@duckdb_only("layout only")
async def test_every_screen_keeps_three_rows_at_60x15(seeded: Workbench) -> None:
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(60, 15)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.size.height - 1 >= 3  # a header row, then hits
        await app.push_screen(DocumentScreen(seeded, "storage"))
        await settle(app, pilot)
        assert app.screen.query_one(VersionTimeline).size.height - 1 >= 3
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.query_one("#diff-left").size.height >= 3
        await app.push_screen(FlowsScreen(seeded, FindQuery("storage"), timings=False))
        await settle(app, pilot)
        assert app.screen.query_one("#flow-log").size.height >= 3
        assert app.screen.query_one("#flow-results").size.height >= 3
        await pilot.resize_terminal(50, 12)
        await settle(app, pilot)
        assert isinstance(app.screen, TooSmall)
        assert "too small: 50×12" in screen_text(app)
        await pilot.resize_terminal(60, 15)
        await settle(app, pilot)
        assert isinstance(app.screen, FlowsScreen)


async def test_after_a_tag_edit_the_document_shows_the_current_version(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(app.workbench, "storage"))
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        app.screen.query_one("#tags-input", Input).value += " reviewed=yes"
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        header = str(screen.query_one("#doc-header", Static).render())
        assert "version 3 of 3 (current)" in header and "reviewed=yes" in header
