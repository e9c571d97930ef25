"""Dialogs: Enter submits one-line forms, Ctrl+S is named on the note form, buttons stay in view,
fast typing after Tab lands in the next field, the add-file path completes and has a picker."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, TextArea
from tui_helpers import burst, screen_text, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.folder_picker import FolderPicker, PathTree
from keepui.tui.screens.forms import FileModal, NoteModal, TagsModal
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.path_input import PathInput, matching_names
from keepui_engine import Workbench


@pytest.mark.parametrize("size", [(80, 24), (60, 15)])
async def test_note_form_buttons_and_ctrl_s_are_in_view(
    app: KeepuiApp, size: tuple[int, int]
) -> None:
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "a")
        await settle(app, pilot)
        assert isinstance(app.screen, NoteModal)
        for button in app.screen.query(Button):
            region = button.region
            assert region.area and region.bottom <= size[1], button.id
        text = screen_text(app)
        assert "Save" in text and "Cancel" in text and "Ctrl+S saves" in text
        assert app.screen.query_one(TextArea).region.height >= 2


async def test_fast_typing_after_tab_lands_in_the_next_field(
    app: KeepuiApp, seeded: Workbench
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "a")
        await settle(app, pilot)
        await burst(app, pilot, *"Caching idea.", "tab", *"idea", "tab", *"topic=cache")
        screen = app.screen
        assert isinstance(screen, NoteModal)
        assert screen.query_one("#note-text", TextArea).text == "Caching idea."
        assert screen.query_one("#note-id", Input).value == "idea"
        assert screen.query_one("#note-tags", Input).value == "topic=cache"
        await burst(app, pilot, "enter")  # Enter in a one-line field saves the note too
        assert isinstance(app.screen, MainScreen)
    assert seeded.get("idea").tags["topic"] == "cache"


async def test_enter_submits_the_tags_form(app: KeepuiApp, seeded: Workbench) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"rivers", "enter")
        await settle(app, pilot)
        await pilot.press("down", "t")  # into the hits, then tags
        await settle(app, pilot)
        assert isinstance(app.screen, TagsModal)
        assert "Enter saves" in screen_text(app)
        await burst(app, pilot, "end", *" sea=north", "enter")
        assert isinstance(app.screen, MainScreen)
    assert seeded.get("rivers").tags["sea"] == "north"


def test_path_completion_names(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notebook.md").write_text("x")
    (tmp_path / ".hidden").write_text("x")
    assert matching_names(f"{tmp_path}/no") == ["notebook.md", "notes/"]
    assert matching_names(f"{tmp_path}/NOTES") == ["notes/"]
    assert matching_names(f"{tmp_path}/.h") == [".hidden"]
    assert matching_names(f"{tmp_path}/zz") == []


async def test_tab_completes_the_path_then_moves_on(app: KeepuiApp, tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "attention.pdf").write_text("x")
    (folder / "attic.md").write_text("x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "f")
        await settle(app, pilot)
        assert isinstance(app.screen, FileModal)
        box = app.screen.query_one("#file-path", PathInput)
        box.value = f"{tmp_path}/pa"
        await burst(app, pilot, "tab")
        assert box.value == f"{folder}/" and app.focused is box
        await burst(app, pilot, *"at", "tab")
        assert box.value == f"{folder}/att" and app.focused is box
        await burst(app, pilot, "tab")  # two names fit: they are listed
        assert "attention.pdf" in screen_text(app) and "attic.md" in screen_text(app)
        await burst(app, pilot, "e", "tab")
        assert box.value == f"{folder}/attention.pdf"
        await burst(app, pilot, "tab", *"topic=ml")  # nothing left to complete: next field
        assert app.screen.query_one("#file-tags", Input).value == "topic=ml"


async def test_the_folder_picker_fills_the_path(app: KeepuiApp, tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "a.md").write_text("x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "f")
        await settle(app, pilot)
        box = app.screen.query_one("#file-path", PathInput)
        box.value = str(tmp_path)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert isinstance(app.screen, FolderPicker)
        tree = app.screen.query_one(PathTree)
        await settle(app, pilot)
        await pilot.press("down")  # the first child: inbox
        await settle(app, pilot)
        assert tree.cursor_node is not None and tree.cursor_node.label.plain == "inbox"
        await pilot.press("s")
        await settle(app, pilot)
        assert isinstance(app.screen, FileModal)
        assert box.value == str(tmp_path / "inbox") and app.focused is box


async def test_keys_typed_fast_after_a_dialog_opens_land_in_it(
    app: KeepuiApp, tmp_path: Path
) -> None:
    (tmp_path / "inbox").mkdir()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        # one burst: leave the bar, open the file form, type a path, complete it, tags
        await burst(app, pilot, "escape", "f", *f"{tmp_path}/inb", "tab", "tab", *"k=v")
        assert isinstance(app.screen, FileModal)
        assert app.screen.query_one("#file-path", PathInput).value == f"{tmp_path}/inbox/"
        assert app.screen.query_one("#file-tags", Input).value == "k=v"
        assert app.screen_stack[-2].query_one("#search-input", Input).value == ""
