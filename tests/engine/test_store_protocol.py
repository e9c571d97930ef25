"""Both store backends satisfy the Backend protocol the engine and its operations are typed with,
and their channels the capability protocols the engine tells them apart by (not by name)."""

from __future__ import annotations

from pathlib import Path

from keepui_engine.store.duckdb.store import Store
from keepui_engine.store.protocol import Backend, FullTextChannel, RebuiltFullText, VectorSearch


def test_the_duckdb_store_is_a_backend(tmp_path: Path) -> None:
    store = Store(tmp_path, "fake", 8)
    try:
        assert isinstance(store, Backend)
        assert isinstance(store.index, VectorSearch)
        words = store.open_fulltext()
        assert isinstance(words, FullTextChannel) and isinstance(words, RebuiltFullText)
        assert words.rebuildable
    finally:
        store.close()


def test_the_postgres_store_is_a_backend(pg_url: str) -> None:
    from keepui_engine.store.postgres.store import PgStore

    store = PgStore(pg_url, "fake", 8)
    try:
        assert isinstance(store, Backend)
        assert isinstance(store.index, VectorSearch)
        words = store.open_fulltext()
        # the database keeps its BM25 up to date: nothing to rebuild, no files to check
        assert isinstance(words, FullTextChannel) and not isinstance(words, RebuiltFullText)
        assert not words.rebuildable
    finally:
        store.close()
