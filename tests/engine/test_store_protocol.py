"""Both store backends satisfy the Backend protocol the engine and its operations are typed with."""

from __future__ import annotations

from pathlib import Path

from keepui_engine.store import Store
from keepui_engine.store.protocol import Backend


def test_the_duckdb_store_is_a_backend(tmp_path: Path) -> None:
    store = Store(tmp_path, "fake", 8)
    try:
        assert isinstance(store, Backend)
    finally:
        store.close()


def test_the_postgres_store_is_a_backend(pg_url: str) -> None:
    from keepui_engine.store.postgres import PgStore

    store = PgStore(pg_url, "fake", 8)
    try:
        assert isinstance(store, Backend)
    finally:
        store.close()
