"""PostgreSQL's pruned BM25 (MaxScore over bm25_terms' bounds) gives exactly what scoring
every posting gives: the same keys in the same order, the same scores."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import psycopg
import pytest
from pg_support import make_pg_store

from keepui_engine import PutSpec, open_workbench
from keepui_engine.store.pg_bm25 import PgFullText
from keepui_engine.store.pg_sql import PgConnection

WORDS = [f"w{i:03d}" for i in range(300)]


def _zipf_text(rng: random.Random) -> str:
    """A text whose words follow Zipf's law (a few words everywhere, most rare), with
    repeats (tf > 1) and lengths from 3 to 150 words."""
    n = rng.choice([3, 8, 20, 40, 150])
    weights = [1 / (i + 1) ** 1.1 for i in range(len(WORDS))]
    return " ".join(rng.choices(WORDS, weights, k=n))


def test_pruned_bm25_matches_scoring_every_posting(tmp_path: Path, pg_url: str) -> None:
    rng = random.Random(5)
    store = make_pg_store(tmp_path / "pg", pg_url)
    with open_workbench(store, own=True) as wb:
        wb.put_many([PutSpec(_zipf_text(rng), id=f"d{i}") for i in range(800)])
        for i in range(0, 800, 13):  # new versions (the old ones keep their postings) ...
            wb.put(_zipf_text(rng), id=f"d{i}")
        for i in range(5, 800, 17):  # ... and deletes: df falls, the bounds stay bounds
            wb.delete(f"d{i}")
    con = PgConnection(pg_url)
    try:
        pruned, every = PgFullText(con, prune_above=0), PgFullText(con, prune_above=10**12)
        queries = [" ".join(rng.sample(WORDS[:40], rng.randint(2, 8))) for _ in range(30)]
        queries += [" ".join(rng.sample(WORDS, rng.randint(1, 6))) for _ in range(30)]
        cut = 0
        for query in queries:
            for k in (1, 10, 30):
                a_keys, a_scores = pruned.search(query, k, None, None)
                b_keys, b_scores = every.search(query, k, None, None)
                assert a_keys.tolist() == b_keys.tolist(), (query, k)
                assert a_scores.tolist() == pytest.approx(b_scores.tolist(), rel=1e-6)
                cut += pruned.scored_terms < len(set(query.split()))
            assert np.allclose(pruned.idf(query), every.idf(query))
    finally:
        con.close()
    assert cut > 20  # the pruning ran: most searches scored only some terms' postings
    with psycopg.connect(pg_url, autocommit=True) as raw:
        kept = "SELECT term, sum(df) FROM bm25_terms GROUP BY term HAVING sum(df) > 0"
        counted = "SELECT term, count(*) FROM bm25_tail GROUP BY term"
        assert sorted(raw.execute(kept).fetchall()) == sorted(raw.execute(counted).fetchall())
