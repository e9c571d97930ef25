"""`keepui doctor` on PostgreSQL: the derived tables (vectors, BM25 documents, statistics,
term bounds, postings) checked against what they derive from, and repaired (issue 23, 8)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from pg_support import make_pg_store
from support import run_cli

from keepui_engine import PutSpec, open_workbench

TEXTS = [f"note {i} about pgtopic{i} and some shared words" for i in range(12)]

# name -> SQL that damages what that check covers
DAMAGE = {
    "vectors": "DELETE FROM key_vectors WHERE key IN (SELECT min(key) FROM key_vectors)",
    "stray vectors": "INSERT INTO key_vectors SELECT key + 100000, vec FROM key_vectors LIMIT 1",
    "word postings": "INSERT INTO bm25_tail VALUES (999999, 'pgtopic3', 9, 9)",
    "word documents": "DELETE FROM bm25_docs WHERE key IN (SELECT min(key) FROM bm25_docs)",
    "word statistics": "UPDATE bm25_stats SET n = n + 5",
    "word terms": "UPDATE bm25_terms SET max_tf = 0 WHERE term = 'pgtopic3'",
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_doctor_finds_and_repairs_each_derived_table(
    tmp_path: Path, pg_url: str, name: str
) -> None:
    store = make_pg_store(tmp_path / "pg", pg_url)
    with open_workbench(store) as wb:
        wb.put_many([PutSpec(t, id=f"p{i}") for i, t in enumerate(TEXTS)])
        assert wb.doctor().healthy
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute(DAMAGE[name])
    with open_workbench(store) as wb:
        found = {c.name: c for c in wb.doctor().checks}
        assert found[name].status == "damaged", found
        fixed = wb.doctor(repair=True)
        assert fixed.healthy and {c.name: c.status for c in fixed.checks}[name] == "repaired"
        assert all(c.status == "ok" for c in wb.doctor().checks)
        assert wb.find("pgtopic3", mode="bm25").hits[0].id == "p3"
        assert wb.find(TEXTS[0], mode="dense").hits[0].id == "p0"
    with psycopg.connect(pg_url, autocommit=True) as con:
        docs = con.execute("SELECT count(*), sum(dl) FROM bm25_docs").fetchone()
        assert con.execute("SELECT sum(n), sum(dl_sum) FROM bm25_stats").fetchone() == docs


def test_doctor_cli_on_postgres(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "pg", pg_url)
    assert run_cli(store, "put", TEXTS[1], "--id", "p1").returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute(DAMAGE["word statistics"])
    got = run_cli(store, "doctor", "--json")
    assert got.returncode == 2
    report = json.loads(got.stdout)
    assert report["schema"] == 1 and report["backend"] == "postgres" and not report["healthy"]
    assert run_cli(store, "doctor", "--repair").returncode == 0
    assert run_cli(store, "doctor").returncode == 0
