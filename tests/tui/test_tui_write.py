"""Writing from the TUI: notes, files of any format and folders, tags, delete/purge with
confirmation, copy, $EDITOR."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea
from tui_helpers import duckdb_only, search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.confirm import ConfirmModal
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.error import ErrorModal
from keepui.tui.screens.forms import FileModal, NoteModal, TagsModal
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import NotFound, Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


async def test_add_a_note(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "a")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        app.screen.query_one("#note-text", TextArea).text = "A new idea about caching."
        app.screen.query_one("#note-id", Input).value = "idea"
        app.screen.query_one("#note-tags", Input).value = "topic=cache status=new"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
    item = seeded.get("idea")
    assert item.text == "A new idea about caching."
    assert item.tags["topic"] == "cache" and item.tags["status"] == "new"


@duckdb_only("the form refuses it before any write")
async def test_empty_note_is_refused(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "a")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        assert "empty" in str(app.screen.query_one("#form-error").render())
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_add_a_file(app: KeepuiApp, seeded: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text("# Plan\nShip the workbench.\n")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "f")
        await pilot.pause()
        assert isinstance(app.screen, FileModal)
        app.screen.query_one("#file-path", Input).value = str(path)
        app.screen.query_one("#file-tags", Input).value = "topic=plan"
        await pilot.press("enter")
        await settle(app, pilot)
    item = seeded.get(path.resolve().as_uri())
    assert item.text == "# Plan\nShip the workbench.\n"
    assert item.tags["_content_type"] == "text/markdown" and item.tags["topic"] == "plan"


async def add_path(app: KeepuiApp, pilot: Pilot[None], path: Path, tags: str = "") -> None:
    """Open the file form (from the results, not the search bar), fill it, press Enter."""
    await pilot.press("escape", "f")
    await pilot.pause()
    assert isinstance(app.screen, FileModal)
    app.screen.query_one("#file-path", Input).value = str(path)
    app.screen.query_one("#file-tags", Input).value = tags
    await pilot.press("enter")
    await settle(app, pilot)


async def test_add_a_file_of_another_format(
    app: KeepuiApp, seeded: Workbench, tmp_path: Path
) -> None:
    path = tmp_path / "plan.html"
    path.write_text(
        "<html><head><title>Launch plan</title></head>"
        "<body><h1>Plan</h1><p>Ship the workbench.</p></body></html>"
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await add_path(app, pilot, path, "topic=plan")
        assert isinstance(app.screen, MainScreen)
        [note] = [n.message for n in app._notifications]
        assert note == f"created {path.resolve().as_uri()} (version 1)"
        assert app.stats is not None and app.stats.items == 6  # the write's own poll
    item = seeded.get(path.resolve().as_uri())
    assert item.text == "Plan\n\nShip the workbench."  # every block a paragraph of its own
    assert item.tags["_content_type"] == "text/html" and item.tags["topic"] == "plan"
    assert item.tags["title"] == "Launch plan"


async def test_add_a_folder_reports_its_counts(
    app: KeepuiApp, seeded: Workbench, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nFirst note in the folder.\n")
    (folder / "b.txt").write_text("Second note in the folder.\n")
    (folder / "empty.txt").write_text("")
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02 binary")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await add_path(app, pilot, folder, "batch=one")
        assert isinstance(app.screen, MainScreen)
        [note] = list(app._notifications)
        assert note.severity == "warning"
        assert note.message.startswith(f"{folder}: 2 indexed, 0 unchanged, 1 skipped, 1 failed")
        assert "empty.txt: " in note.message and "empty file" in note.message
        assert app.screen.query_one(StatusBar).activity == ""
    for name in ("a.md", "b.txt"):
        assert seeded.get((folder / name).resolve().as_uri()).tags["batch"] == "one"


@duckdb_only("a file-system error, before the store")
async def test_adding_a_missing_file_shows_an_error(app: KeepuiApp, tmp_path: Path) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "f")
        await pilot.pause()
        app.screen.query_one("#file-path", Input).value = str(tmp_path / "nope.txt")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.error_title == "Invalid input"
        assert "nope.txt: no such file or directory" in app.screen.message


async def test_edit_tags(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "Danube Rhine tag:topic=geo")
        await pilot.press("t")
        await settle(app, pilot)
        assert isinstance(app.screen, TagsModal)
        box = app.screen.query_one("#tags-input", Input)
        assert box.value == "topic=geo"
        box.value = "region=europe kind=note"
        await pilot.press("enter")
        await settle(app, pilot)
    tags = seeded.get("rivers").tags
    assert tags.get("region") == "europe" and tags.get("kind") == "note" and "topic" not in tags
    assert seeded.history("rivers")[0].change == "tags"


async def test_delete_reverts_after_confirmation(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "DuckDB tag:status=decided")
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await settle(app, pilot)
        assert seeded.get("storage").version == 2
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
    assert seeded.get("storage").version == 1


async def test_purge_from_the_document_screen(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(seeded, "storage"))
        await settle(app, pilot)
        await pilot.press("X")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "Purge" in app.screen.confirm_title
        await pilot.click("#confirm-yes")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
    with pytest.raises(NotFound):
        seeded.get("storage")


async def test_copy_id_and_json(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "Danube tag:topic=geo")
        await pilot.press("y")
        assert app.clipboard == "rivers"
        await pilot.press("Y")
        hit = json.loads(app.clipboard)
        assert hit["id"] == "rivers" and "scores" in hit
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("Y")
        assert json.loads(app.clipboard)["text"].startswith("Rivers of Europe")


@duckdb_only("the TUI alone: no hit, nothing to copy")
async def test_copy_without_a_hit_warns(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "y")
        assert app.clipboard == ""


@pytest.fixture
def fake_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$EDITOR: a script that appends a line to the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\nwith open(sys.argv[1], 'a') as f:\n    f.write('\\nEdited in the editor.')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    return script


async def test_e_opens_the_editor_and_saves_a_version(
    app: KeepuiApp, seeded: Workbench, fake_editor: Path
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "Danube tag:topic=geo")
        await pilot.press("e")
        await settle(app, pilot)
    item = seeded.get("rivers")
    assert item.version == 2 and (item.text or "").endswith("Edited in the editor.")


@duckdb_only("the editor fails before any write")
async def test_missing_editor_is_an_error_dialog(
    app: KeepuiApp, seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", "/nonexistent/editor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "Danube tag:topic=geo")
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal) and app.screen.error_title == "Editor failed"
    assert seeded.get("rivers").version == 1


async def test_written_items_show_up_in_the_open_tab(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "caching tag:topic=cache")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.ids == []
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#note-text", TextArea).text = "caching layer"
        app.screen.query_one("#note-tags", Input).value = "topic=cache"
        await pilot.press("ctrl+s")
        await settle(app, pilot, rounds=5)
        assert len(pane.ids) == 1
