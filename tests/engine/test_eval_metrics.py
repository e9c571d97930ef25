"""keepui eval's metrics: our own small implementation agrees with trec_eval (pytrec_eval)."""

from __future__ import annotations

import random

import pytest

from keepui_engine.evaluation import mrr_at, ndcg_at, recall_at, trec_scores


def test_hand_computed_values() -> None:
    rel = {"a": 1, "b": 2}
    ranked = ["x", "b", "y", "a"]
    # DCG = 2/log2(3) + 1/log2(5); IDCG = 2/log2(2) + 1/log2(3)
    dcg = 2 / 1.5849625007211562 + 1 / 2.321928094887362
    idcg = 2 + 1 / 1.5849625007211562
    assert ndcg_at(ranked, rel) == pytest.approx(dcg / idcg)
    assert recall_at(ranked, rel) == 1.0 and recall_at(ranked[:2], rel) == 0.5
    assert mrr_at(ranked, rel) == 0.5 and mrr_at(["x"] * 3, rel) == 0.0


def test_own_metrics_match_trec_eval() -> None:
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(300)]
    qrels, run = {}, {}
    for q in range(40):
        qid = f"q{q}"
        qrels[qid] = {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 6))}
        ranked = rng.sample(docs, 150)
        run[qid] = [(d, 150.0 - i) for i, d in enumerate(ranked)]
    trec = trec_scores(run, qrels)
    for qid, hits in run.items():
        ranked = [d for d, _ in hits]
        assert trec[qid]["ndcg@10"] == pytest.approx(ndcg_at(ranked, qrels[qid]), abs=1e-6)
        assert trec[qid]["recall@100"] == pytest.approx(recall_at(ranked, qrels[qid]), abs=1e-6)
        assert trec[qid]["mrr@10"] == pytest.approx(mrr_at(ranked, qrels[qid]), abs=1e-6)
