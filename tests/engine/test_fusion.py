"""Score fusion's exchange rate on hand-made pools, and what fuse does with it (no model).

Ranking claims with real text are in tests/scenarios/test_hybrid_ranking.py (real model);
these pin the arithmetic: which way each input moves the rate, and its limits.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from keepui_engine import PutSpec, Workbench
from keepui_engine.search.fusion import BM25_UNIT, DENSE_SPREAD, PRIOR, bm25_rate, robust_spread

DENSE = np.asarray([0.62, 0.55, 0.50, 0.47, 0.45, 0.44, 0.42, 0.41, 0.40, 0.38] * 3)


def test_the_rate_is_the_geometric_mean_of_the_share_rate_and_the_spread_ratio() -> None:
    bm25 = np.linspace(30.0, 8.0, 30)
    idf = np.asarray([6.0, 5.0, 4.0, 2.0])
    relative = robust_spread(DENSE, DENSE_SPREAD) / robust_spread(bm25, BM25_UNIT * idf.mean())
    assert bm25_rate(DENSE, bm25, idf) == pytest.approx(math.sqrt(relative / idf.sum()))


def test_a_long_query_keeps_its_bm25_from_flattening_away() -> None:
    # a paragraph: 90 words, idf sum ~450, while its best texts score 60..40: the share rate
    # (1 / idf sum) makes BM25's whole spread worth a fraction of the cosine spread
    idf = np.full(90, 5.0)
    bm25 = np.linspace(60.0, 40.0, 30)
    share = 1 / idf.sum()
    rate = bm25_rate(DENSE, bm25, idf)
    dense_spread = robust_spread(DENSE, 0.0, weight=0)
    bm25_spread = robust_spread(bm25, 0.0, weight=0)
    assert share * bm25_spread < 0.3 * dense_spread  # the old default: a sliver
    assert rate * bm25_spread > 0.5 * dense_spread  # now the same order as dense's


def test_a_one_word_query_weighs_bm25_by_that_words_evidence() -> None:
    rare, common = np.asarray([9.0]), np.asarray([1.5])
    pool = np.asarray([8.0, 7.5, 7.0, 6.0, 5.0])
    assert bm25_rate(DENSE, pool, rare) < bm25_rate(DENSE, pool, common)
    # a one-word match counts at most about as much as the dense channel's own spread allows
    assert bm25_rate(DENSE, pool, rare) * 8.0 < 1.0


def test_a_query_of_stop_words_only_has_no_bm25_weight() -> None:
    assert bm25_rate(DENSE, np.empty(0), np.empty(0)) == 0.0


def test_one_partial_match_in_a_small_store_does_not_stand_out_alone() -> None:
    # three texts: BM25 matched one of them on one of two query words; the prior (PRIOR
    # pseudo-texts at half a word's idf) keeps that lone match from being infinitely unusual
    dense = np.asarray([0.34, 0.33, 0.16])
    bm25 = np.asarray([0.96])
    idf = np.asarray([2.8, 1.2])
    spread = robust_spread(np.asarray([0.96, 0.0, 0.0]), BM25_UNIT * idf.mean())
    assert spread == pytest.approx(math.sqrt(PRIOR * (BM25_UNIT * idf.mean()) ** 2 / (3 + PRIOR)))
    rate = bm25_rate(dense, bm25, idf)
    assert 0.16 + rate * 0.96 < 0.33  # the match does not lift the text past the two others


def test_bm25_only_and_dense_only_evidence(wb: Workbench) -> None:
    texts = {
        "fox": "The quick brown fox jumps over the lazy dog",
        "duck": "DuckDB stores columnar tables in a single file",
        "tea": "A lazy afternoon with tea and biscuits",
    }
    wb.put_many([PutSpec(t, id=i) for i, t in texts.items()])
    for query in ("the of and", "zzzqx"):  # stop words only; a word no text has
        hits = wb.find(query, dedup=False).hits
        dense = wb.find(query, mode="dense", dedup=False).hits
        assert [h.id for h in hits] == [h.id for h in dense]
        assert all(h.scores["bm25"] is None for h in hits)
        for h in hits:
            assert h.scores["fused"] == pytest.approx(max(h.similarity or 0.0, 0.0) / 2)
    hits = wb.find("columnar", dedup=False).hits
    assert hits[0].id == "duck" and (hits[0].scores["bm25"] or 0) > 0
    for fusion in ("score", "share", "rrf"):
        found = wb.find("lazy", fusion=fusion, dedup=False).hits
        assert {h.id for h in found if h.scores["bm25"]} == {"fox", "tea"}
        assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)
