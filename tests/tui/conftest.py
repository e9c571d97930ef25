"""Pilot fixtures: a seeded fake-embedder store, a frozen clock, no cursor blink."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import textual.constants
from support import make_fake_store
from textual.widgets import Input, TextArea
from tui_helpers import NOW, T_AFTER_SEED, Clock, seed

import keepui.widgets.format as fmt
import keepui_engine.engine as engine_module
import keepui_engine.search.searches as searches_module
from keepui.app import KeepuiApp
from keepui_engine import Workbench, open_workbench


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "cursor_blink", False)
    monkeypatch.setattr(TextArea, "cursor_blink", False)
    # Pilot waits for animations (tab underlines, scrolling) after every key press.
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Engine writes tick a minute each from T0; the UI's now is NOW."""
    clock = Clock()
    monkeypatch.setattr(engine_module, "_now", clock)
    monkeypatch.setattr(searches_module, "_now", clock)
    monkeypatch.setattr(fmt, "now", lambda: NOW)
    return clock


@pytest.fixture
def tui_store(tmp_path: Path) -> Path:
    """A fake-embedder store without recency decay (scores do not depend on the clock)."""
    return make_fake_store(tmp_path / "store", half_life_days=0)


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed documents, written once per session under the frozen clock (then copied)."""
    path = make_fake_store(tmp_path_factory.mktemp("template") / "store", half_life_days=0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine_module, "_now", Clock())
        with open_workbench(path, own=True) as bench:
            seed(bench)
    return path


@pytest.fixture
def seeded(seeded_template: Path, tmp_path: Path, frozen_clock: Clock) -> Iterator[Workbench]:
    """A Workbench owning a fresh copy of the seeded store (tests that need the socket serve)."""
    store = tmp_path / "store"
    shutil.copytree(seeded_template, store)
    frozen_clock.t = T_AFTER_SEED
    bench = open_workbench(store, own=True)
    yield bench
    bench.close()


@pytest.fixture
def app(seeded: Workbench) -> KeepuiApp:
    """The app on the seeded store, without the background poll (tests poll on demand)."""
    return KeepuiApp(seeded, poll_interval=None)
