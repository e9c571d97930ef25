"""The workbench's layout and smaller behaviours, keys only: the version timeline at 80x24,
re-flow on resize, the text pane after `G`, ids cut at the end, where notices go."""

from __future__ import annotations

from textual.widgets import Markdown, Static
from tui_helpers import ATLAS, search, settle, words

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.help import HelpScreen
from keepui.tui.theming import configured_theme
from keepui.tui.widgets.hit_row import row_layout, short_id, short_ids
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.status_bar import StatusBar
from keepui.tui.widgets.version_timeline import VersionTimeline
from keepui_engine import Workbench

LONG = ATLAS


async def test_after_g_the_text_pane_shows_the_version_not_an_earlier_part(
    seeded: Workbench,
) -> None:
    seeded.put(LONG, id="atlas")  # 3 parts; only this version says "glacier"
    seeded.put("A later rewrite with no parts.", id="atlas")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "glacier crevasse mode:bm25 history:on")
        await pilot.press("enter")  # opened at the matched part of the older version
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        content = screen.query_one("#doc-content")
        assert str(content.border_title).startswith("part 2 of 3")
        await pilot.press("G")  # the last row, already under the cursor: show that version
        await settle(app, pilot)
        assert screen.shown is not None and screen.shown.version == 1
        assert str(content.border_title) == "text · v1 (@V{1})"
        text = str(screen.query_one("#doc-text", Static).render())
        assert text == LONG
        await pilot.press("g")  # the current version
        await settle(app, pilot)
        assert str(content.border_title) == "text · v2 (current)"
        await pilot.press("G")  # and back: the whole older version again, not its part
        await settle(app, pilot)
        assert str(content.border_title) == "text · v1 (@V{1})"


async def test_at_80x24_the_timeline_shows_three_versions(seeded: Workbench) -> None:
    sections = "\n\n".join(f"# Section {k}\n" + words(200, f"w{k}x") for k in range(10))
    for i in range(15):  # a long design doc (10 parts) with 15 versions
        seeded.put(f"{LONG}\n\n{sections}\n\nRevision {i}.", id="design")
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "lighthouse keeper mode:bm25")
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DocumentScreen) and screen.query_one("#parts").display
        timeline = screen.query_one(VersionTimeline)
        assert timeline.scrollable_content_region.height - 1 >= 3  # rows under the header
        await pilot.resize_terminal(120, 40)
        await settle(app, pilot)
        assert timeline.scrollable_content_region.height - 1 >= 10
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert timeline.scrollable_content_region.height - 1 >= 3


async def test_the_results_table_reflows_on_resize(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        wide = pane.rows_layout
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert pane.size.width <= 80 and pane.rows_layout == row_layout(pane.size.width)
        assert pane.rows_layout != wide
        columns = sum(c.get_render_width(pane) for c in pane.columns.values())
        assert columns <= pane.size.width  # no column cut off past the right edge
        await pilot.resize_terminal(160, 45)
        await settle(app, pilot)
        assert pane.rows_layout == row_layout(pane.size.width) and pane.size.width > 100


async def test_the_results_table_reflows_after_a_resize_on_another_screen(
    app: KeepuiApp,
) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None
        await pilot.press("enter")  # the document screen
        await settle(app, pilot)
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert pane.size.width <= 80 and pane.rows_layout == row_layout(pane.size.width)


async def test_notes_sit_in_the_status_line_and_an_empty_tab_names_its_filter(
    app: KeepuiApp,
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage tag:topic=nothing-like-this")
        status = str(app.screen.query_one(StatusBar).render())
        assert "no current version matches tag topic=nothing-like-this" in status
        assert not app._notifications  # nothing over the detail pane
        detail = str(app.screen.query_one("#detail-body", Static).render())
        assert "No hits for 'storage'." in detail and "tag topic=nothing-like-this" in detail
        await search(app, pilot, "rivers")  # a tab with nothing to say: the line clears
        assert "matches" not in str(app.screen.query_one(StatusBar).render())
        await pilot.press("left_square_bracket")  # back to the first tab: its note again
        await settle(app, pilot)
        assert "topic=nothing-like-this" in str(app.screen.query_one(StatusBar).render())


def test_ids_are_cut_at_the_end_and_uris_keep_their_file_name() -> None:
    assert short_id("auth-design", 20) == "auth-design"
    assert short_id("auth-design-notes-2026", 10) == "auth-desi…"
    uri = "file:///home/user/notes/rivers.md"
    assert short_id(uri, 20).endswith("rivers.md")
    shown = short_ids({"meeting-notes-2026-11-01": 12, "meeting-notes-2026-11-02": 12})
    assert len(set(shown.values())) == 2 and all(v.startswith("me") for v in shown.values())


async def test_a_theme_chosen_in_the_workbench_is_the_next_sessions(seeded: Workbench) -> None:
    store = seeded.settings.store
    before = (store / "keepui.toml").read_text()
    app = KeepuiApp(seeded, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.theme == "keepui-dark"
        app.theme = "keepui-light"  # what the palette's theme picker does
        await pilot.pause()
    assert configured_theme(store) == "keepui-light"
    after = (store / "keepui.toml").read_text()
    assert after.startswith(before.rstrip("\n"))  # the rest of the file untouched
    again = KeepuiApp(seeded, poll_interval=None)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(again, pilot)
        assert again.theme == "keepui-light"
        again.theme = "keepui-dark"
        await pilot.pause()
    assert configured_theme(store) == "keepui-dark"
    assert (store / "keepui.toml").read_text().count("theme =") == 1


async def test_help_opens_at_the_section_of_the_screen_it_was_called_from(
    app: KeepuiApp,
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        box = app.screen.query_one("#help-box")
        top = box.scroll_y
        assert isinstance(app.screen, HelpScreen) and app.screen.section == "Search (main screen)"
        await pilot.press("escape")
        await search(app, pilot, "rivers")
        await pilot.press("enter")  # the document screen
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.section == "Document"
        box = help_screen.query_one("#help-box")
        heading = next(
            help_screen.query_one(f"#{block}")
            for _, title, block in help_screen.query_one(Markdown).table_of_contents or []
            if title == "Document"
        )
        assert box.scroll_y > top  # scrolled down to it
        assert 0 <= heading.region.y - box.content_region.y <= 2  # at the top of the view
