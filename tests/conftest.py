"""Shared fixtures: a fake-embedder store in tmp_path, and no test ever touches ~/.keepui."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import Workbench, open_workbench


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KEEPUI_STORE", str(home / ".keepui-default"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A fresh store directory using the fake embedder."""
    return make_fake_store(tmp_path / "store")


@pytest.fixture
def wb(store_dir: Path) -> Iterator[Workbench]:
    """A Workbench owning a fresh fake-embedder store."""
    bench = open_workbench(store_dir, own=True)
    yield bench
    bench.close()
