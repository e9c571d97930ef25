"""Pilot fixtures: a seeded fake-embedder store (DuckDB, or PostgreSQL where a module asks for
both backends), a frozen clock, no cursor blink."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pg_support
import pytest
import textual.constants
from support import make_fake_store
from textual.widgets import Input, TextArea
from tui_helpers import NOW, T_AFTER_SEED, Clock, seed

import keepui.tui.widgets.format as fmt
import keepui_engine.ops.engine as engine_module
import keepui_engine.search.searches as searches_module
from keepui.tui.app import KeepuiApp
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
def tui_backend() -> str:
    """The backend `seeded` and `tui_store` are built on. A module runs its tests on both
    backends by overriding this with `@pytest.fixture(params=["duckdb", "postgres"])`."""
    return "duckdb"


@pytest.fixture
def tui_store(tui_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A fake-embedder store without recency decay (scores do not depend on the clock), on
    `tui_backend`: for PostgreSQL a fresh database (`pg_url` drops it after the test)."""
    if tui_backend == "duckdb":
        return make_fake_store(tmp_path / "store", half_life_days=0)
    url = request.getfixturevalue("pg_url")
    return pg_support.make_pg_store(tmp_path / "store", url, half_life_days=0)


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
def seeded(
    tui_backend: str, tmp_path: Path, frozen_clock: Clock, request: pytest.FixtureRequest
) -> Iterator[Workbench]:
    """A Workbench owning a fresh seeded store (tests that need the socket serve).

    DuckDB: a copy of the session's seeded template. PostgreSQL: `tui_store`'s fresh database,
    seeded here under the same clock as the template (a database cannot be copied like a
    directory); skipped without the postgres extra."""
    if tui_backend == "duckdb":
        store = tmp_path / "store"
        shutil.copytree(request.getfixturevalue("seeded_template"), store)
    else:
        store = request.getfixturevalue("tui_store")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine_module, "_now", Clock())
            with open_workbench(store, own=True) as bench:
                seed(bench)
    frozen_clock.t = T_AFTER_SEED
    bench = open_workbench(store, own=True)
    assert (bench.settings.url is not None) == (tui_backend == "postgres")
    yield bench
    bench.close()


@pytest.fixture
def app(seeded: Workbench) -> KeepuiApp:
    """The app on the seeded store, without the background poll (tests poll on demand)."""
    return KeepuiApp(seeded, poll_interval=None)
