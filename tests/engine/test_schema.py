"""One schema for both backends: the shared migrations, as each backend runs them."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from keepui_engine.store.duckdb.schema import NAMES as DUCK
from keepui_engine.store.duckdb.schema import migrate
from keepui_engine.store.postgres.schema import NAMES as PG
from keepui_engine.store.schema import MIGRATIONS, for_dialect

pytestmark = pytest.mark.fast


def test_names_are_ordered_unique_and_each_runs_somewhere() -> None:
    names = [m.name for m in MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert set(DUCK) | set(PG) == set(names)
    assert [n for n in names if n in DUCK] == DUCK  # the shared order, on each backend


def test_every_token_is_filled_in() -> None:
    for dialect in ("duckdb", "postgres"):
        for step in for_dialect(dialect):
            for sql in step.statements(dialect, 384):
                assert not any(t in sql for t in ("{key}", "{text}", "{blob}", "{dim}")), sql


def test_duckdb_applies_each_once_and_records_it(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    assert migrate(con) == DUCK
    assert migrate(con) == []
    recorded = [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]
    assert recorded == DUCK
    got = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    tables = {r[0] for r in got}
    assert {"documents", "versions", "vector_keys", "parts", "pending", "judgments"} <= tables
    assert not {"settings", "key_vectors", "bm25_docs"} & tables  # PostgreSQL's own


def test_a_store_from_before_a_migration_gets_only_the_missing_one(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    migrate(con)
    con.execute("DELETE FROM _migrations WHERE name = 'm009_bm25_passage'")
    con.execute("ALTER TABLE bm25_tail DROP COLUMN passage")
    con.execute("INSERT INTO bm25_tail VALUES (1, 'word', 1, 5)")
    assert migrate(con) == ["m009_bm25_passage"]
    assert con.execute("SELECT passage FROM bm25_tail").fetchall() == [(False,)]
