"""PostgreSQL-only behaviour: the SQL translation, BM25 parity with DuckDB, migration from a
DuckDB store through export/import, and the errors that say what to do (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pg_support import database_url, fresh_database, make_pg_store
from support import make_fake_store, run_cli

from keepui_engine import FindQuery, PutSpec, open_workbench
from keepui_engine.store.postgres.schema import LEGACY_VERSION, NAMES

TEXTS = [
    "The quick brown fox jumps over the lazy dog",
    "A lazy afternoon with a good book and tea",
    "Foxes are quick and clever animals of the forest",
    "Databases store rows; search engines store postings",
    "The dog sleeps all day, lazy and content",
    "Quick sort and merge sort are classic algorithms",
]


def _bm25(store: Path, query: str) -> list[tuple[str, float]]:
    with open_workbench(store, own=True) as wb:
        return [(h.id, h.scores["bm25"]) for h in wb.find(query, mode="bm25").hits]  # type: ignore[misc]


def test_bm25_scores_match_the_duckdb_channel(tmp_path: Path, pg_url: str) -> None:
    duck = make_fake_store(tmp_path / "duck")
    pg = make_pg_store(tmp_path / "pg", pg_url)
    for store in (duck, pg):
        with open_workbench(store, own=True) as wb:
            wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)])
            wb.put("a lazy fox again, updated", id="t5")  # a second version: two live keys
            wb.delete("t3")  # its postings go, and N and the mean length follow
    with psycopg.connect(pg_url, autocommit=True) as con:
        docs = con.execute("SELECT count(*), sum(dl) FROM bm25_docs").fetchone()
        assert con.execute("SELECT sum(n), sum(dl_sum) FROM bm25_stats").fetchone() == docs
    for query in ("lazy fox", "quick sort", "store postings"):
        a, b = _bm25(duck, query), _bm25(pg, query)
        assert [d for d, _ in a] == [d for d, _ in b], query
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-5)


def _minutes(word: str) -> str:
    """~1,400 words the fake embedder (a 510-word window) splits into passages."""
    sentence = f"The committee met again and noted {word} in the minutes of the day."
    return " ".join([sentence] * 108)


def test_bm25_with_passages_matches_the_duckdb_channel(tmp_path: Path, pg_url: str) -> None:
    """Whole-text idf and per-kind mean lengths (store/bm25_stats.py) on both backends: the
    same scores for a store with passages, also after a write and a delete."""
    duck = make_fake_store(tmp_path / "duck")
    pg = make_pg_store(tmp_path / "pg", pg_url)
    for store in (duck, pg):
        with open_workbench(store, own=True) as wb:
            wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)])
            wb.put_many([PutSpec(_minutes("quinoa"), id="long"), PutSpec(_minutes("fox"), id="l2")])
            assert len(wb.parts("long")) >= 3
            wb.delete("l2")
    with psycopg.connect(pg_url, autocommit=True) as con:
        n, n_part = con.execute("SELECT sum(n), sum(n_part) FROM bm25_stats").fetchone()
        assert n - n_part == len(TEXTS) + 1  # whole texts: the six notes and the minutes
    for query in ("lazy fox", "quinoa minutes", "committee fox day"):
        a, b = _bm25(duck, query), _bm25(pg, query)
        assert [d for d, _ in a] == [d for d, _ in b], query
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-5)
    for store in (duck, pg):  # the query's idf (fusion's rate) alike, a word no text has too
        with open_workbench(store, own=True) as wb:
            engine = wb._engine  # noqa: SLF001
            assert engine is not None
            got = engine.fulltext.idf("quinoa fox zzzunheard").tolist()
        if store == duck:
            want = got
    assert got == pytest.approx(want, rel=1e-9)


V1_DOCS_ADD = """CREATE OR REPLACE FUNCTION keepui_docs_add() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO bm25_docs SELECT DISTINCT key, dl FROM new_rows ON CONFLICT DO NOTHING;
    RETURN NULL; END $$"""


def test_a_version_1_database_is_migrated_on_open(tmp_path: Path, pg_url: str) -> None:
    duck = make_fake_store(tmp_path / "duck")
    pg = make_pg_store(tmp_path / "pg", pg_url)
    with open_workbench(pg, own=True) as wb:
        wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS[:3])])
    with psycopg.connect(pg_url, autocommit=True) as con:  # as keepui's first cut left it
        con.execute("DROP TABLE bm25_stats")
        con.execute("DROP TABLE bm25_terms")
        con.execute("DROP TRIGGER bm25_terms_add ON bm25_tail")
        con.execute("DROP TRIGGER bm25_terms_drop ON bm25_tail")
        con.execute(V1_DOCS_ADD)
        con.execute("DROP TABLE _migrations")  # the scheme before the shared migrations
        con.execute("CREATE TABLE keepui_schema (version INTEGER NOT NULL)")
        con.execute("INSERT INTO keepui_schema VALUES (1)")
    for store in (duck, pg):
        with open_workbench(store, own=True) as wb:
            if store == duck:
                wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS[:3])])
            wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS) if i >= 3])
    with psycopg.connect(pg_url, autocommit=True) as con:
        assert con.execute("SELECT version FROM keepui_schema").fetchone() == (LEGACY_VERSION,)
        recorded = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
        assert recorded == set(NAMES)
        assert con.execute("SELECT sum(n) FROM bm25_stats").fetchone() == (len(TEXTS),)
        # version 3: each term's df, from the postings the migration found and those after it
        terms = "SELECT term, sum(df) FROM bm25_terms GROUP BY term HAVING sum(df) > 0"
        counted = "SELECT term, count(*) FROM bm25_tail GROUP BY term"
        assert sorted(con.execute(terms).fetchall()) == sorted(con.execute(counted).fetchall())
    for query in ("lazy fox", "quick sort", "store postings"):
        a, b = _bm25(duck, query), _bm25(pg, query)
        assert [d for d, _ in a] == [d for d, _ in b], query
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-5)


def test_a_duckdb_export_moves_into_postgres_losslessly(tmp_path: Path, pg_url: str) -> None:
    duck = make_fake_store(tmp_path / "duck")
    with open_workbench(duck, own=True) as wb:
        wb.put_many([PutSpec(t, id=f"t{i}", tags=["k=v"]) for i, t in enumerate(TEXTS)])
        wb.put("second version of t1", id="t1", tags=["k=w", "extra=é"])
        wb.judge("lazy", "t0", 3)
    flags = ("--include-versions", "--include-parts", "--with-vectors")
    first = run_cli(duck, "export", "-", *flags)
    assert first.returncode == 0, first.stderr
    pg = make_pg_store(tmp_path / "pg", pg_url)
    loaded = run_cli(pg, "import", "-", stdin=first.stdout)
    assert loaded.returncode == 0, loaded.stderr
    again = run_cli(pg, "export", "-", *flags)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    found = json.loads(run_cli(pg, "find", "second version", "--json").stdout)
    assert found["hits"][0]["id"] == "t1"
    hist = json.loads(run_cli(pg, "get", "t1", "--history", "--json").stdout)
    assert len(hist["versions"]) == 2


def test_an_unreachable_url_is_exit_2_naming_what_to_check(tmp_path: Path) -> None:
    url = f"postgresql://nobody@/nowhere?host={tmp_path}&port=1"
    result = run_cli(url, "stats")  # type: ignore[arg-type]
    assert result.returncode == 2
    assert "cannot connect" in result.stderr and "serve-pg" in result.stderr
    assert result.stdout == ""


def test_a_server_without_pgvector_is_exit_2(tmp_path: Path, pg_server: str) -> None:
    name = f"novec_{tmp_path.name[-8:].replace('-', '_')}".lower()
    with psycopg.connect(pg_server, autocommit=True) as con:
        con.execute(
            "DO $$ BEGIN CREATE ROLE plain LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
        con.execute(f"CREATE DATABASE {name} OWNER plain")
    url = database_url(pg_server, name).replace("postgres:@", "plain@", 1)
    result = run_cli(url, "put", "x")  # type: ignore[arg-type]
    assert result.returncode == 2, result.stderr
    assert "pgvector" in result.stderr and "CREATE EXTENSION vector" in result.stderr


def test_another_schema_version_is_exit_2_saying_what_to_do(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    assert run_cli(store, "put", "hello", "-i", "h").returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("INSERT INTO _migrations VALUES ('m099_from_the_future', now())")
    result = run_cli(store, "get", "h")
    assert result.returncode == 2
    assert "m099_from_the_future" in result.stderr and "keepui export" in result.stderr


def test_url_given_directly_reads_settings_from_the_database(
    tmp_path: Path, pg_url: str, pg_server: str
) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)  # its keepui.toml (fake embedder) seeds it
    assert run_cli(store, "put", "seeded settings", "-i", "a").returncode == 0
    stats = json.loads(run_cli(pg_url, "stats", "--json").stdout)  # type: ignore[arg-type]
    assert stats["model"] == "fake-hash-v1" and stats["items"] == 1
    missing = run_cli(fresh_database(pg_server), "find", "x")  # type: ignore[arg-type]
    assert missing.returncode == 2 and "no keepui store" in missing.stderr


def test_agent_commands_on_a_url_store(tmp_path: Path, pg_url: str, pg_server: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    assert run_cli(store, "put", "--text", "seed", "-i", "seed").returncode == 0
    url: Any = pg_url  # a bare URL, as KEEPUI_STORE would give it
    assert run_cli(url, "now", "reviewing the queue").returncode == 0
    now = json.loads(run_cli(url, "now", "--json").stdout)
    assert now["text"] == "reviewing the queue" and now["version"] == 1
    empty: Any = fresh_database(pg_server)
    nothing = run_cli(empty, "now", "--json")  # reading creates nothing: an empty note
    assert nothing.returncode == 0 and json.loads(nothing.stdout)["version"] == 0
    assert run_cli(empty, "find", "x").returncode == 2  # still no store there
    assert run_cli(url, "judge", "queue", "seed", "--grade", "2").returncode == 0
    judged = json.loads(run_cli(url, "judgments", "--json").stdout)["judgments"]
    assert [(j["id"], j["grade"]) for j in judged] == [("seed", 2)]
    facets = json.loads(run_cli(url, "list", "--facets", "--json").stdout)
    assert facets["schema"] == 1 and "facets" in facets


def test_search_history_on_postgres(tmp_path: Path, pg_url: str) -> None:
    # The workbench records every search (a JSON column written with a text parameter).
    store = make_pg_store(tmp_path / "s", pg_url)
    with open_workbench(store, own=True) as wb:
        wb.put("Login bug on web after password reset", id="b2")
        q = FindQuery("login bug", limit=5, mode="bm25")
        first = wb.record_search(q, [h.id for h in wb.find_query(q).hits])
        assert first.ids == ["b2"]
        (again,) = wb.searches(limit=1)
        assert again.q.query == "login bug" and again.q.mode == "bm25"
        assert again.ids == ["b2"]


def test_serve_pg_refuses_a_shared_buffers_that_is_not_a_size(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "keepui", "serve-pg", str(tmp_path / "pgdata")]
    done = subprocess.run([*cmd, "--shared-buffers", "lots"], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "--shared-buffers 'lots'" in done.stderr and "512MB" in done.stderr
    assert done.stdout == "" and not (tmp_path / "pgdata").exists()


def test_serve_pg_prints_a_url_that_works(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "keepui", "serve-pg", str(tmp_path / "pgdata")]
        + ["--shared-buffers", "64MB"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # blocks until the server is up
        assert url.startswith("postgresql://"), proc.stderr.read() if proc.stderr else ""
        with psycopg.connect(url) as con:
            assert con.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            assert con.execute("SHOW shared_buffers").fetchone() == ("64MB",)
    finally:
        proc.send_signal(2)  # Ctrl-C
        assert proc.wait(timeout=60) == 0
