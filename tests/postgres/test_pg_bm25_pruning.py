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
from keepui_engine.store.postgres.bm25 import PgFullText
from keepui_engine.store.postgres.search import PgVectorIndex
from keepui_engine.store.postgres.sql import PgConnection

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


def test_many_allowed_keys_are_filtered_after_the_search_with_the_same_hits(
    tmp_path: Path, pg_url: str
) -> None:
    """Past post_filter_above allowed keys, neither channel sends the key list: each searches
    all documents and keeps the allowed ones; BM25 gives exactly what the list gives, dense
    (HNSW) the same keys but for the index's approximation."""
    rng = random.Random(9)
    store = make_pg_store(tmp_path / "pg", pg_url, exact_max_vectors=10)
    with open_workbench(store, own=True) as wb:
        wb.put_many([PutSpec(_zipf_text(rng), id=f"d{i}") for i in range(600)])
    con = PgConnection(pg_url)
    try:
        keys = np.asarray([r[0] for r in con.raw("SELECT key FROM key_vectors").fetchall()])
        after, listed = PgFullText(con), PgFullText(con)
        after.post_filter_above, listed.post_filter_above = 0, 10**12
        con.raw("SET hnsw.ef_search = 200")  # as the store sets them (PgStore)
        con.raw("SET hnsw.iterative_scan = relaxed_order")
        dim = len(con.raw("SELECT vec FROM key_vectors LIMIT 1").fetchone()[0].to_numpy())
        vectors = PgVectorIndex(con, dim, exact_max=10)
        exact = PgVectorIndex(con, dim, exact_max=10)
        vectors.post_filter_above, exact.post_filter_above = 0, 10**12
        overlap = []
        for share in (0.9, 0.5, 0.1, 0.02):
            allowed = np.sort(rng.sample(sorted(keys.tolist()), int(share * len(keys))))
            for query in [" ".join(rng.sample(WORDS[:60], 3)) for _ in range(8)]:
                a_keys, a_scores = after.search(query, 10, None, allowed)
                b_keys, b_scores = listed.search(query, 10, None, allowed)
                assert a_keys.tolist() == b_keys.tolist(), (share, query)
                assert a_scores.tolist() == pytest.approx(b_scores.tolist(), rel=1e-6)
                qvec = np.asarray(rng.choices(range(-5, 6), k=dim), np.float32)
                qvec /= np.linalg.norm(qvec)
                got, *_ = vectors.search(qvec, 10, allowed)
                ref, *_ = exact.search(qvec, 10, allowed)  # the list sent: exact below 20,000
                assert set(got.tolist()) <= set(allowed.tolist()) and len(got) == 10
                overlap.append(len(set(got.tolist()) & set(ref.tolist())) / 10)
        assert np.mean(overlap) >= 0.9
    finally:
        con.close()
