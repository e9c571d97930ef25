"""keepui eval's metrics: our own small implementation agrees with trec_eval (pytrec_eval)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import UsageError
from keepui_engine.client.beir import evaluate
from keepui_engine.search.evaluation import (
    beir_files,
    mrr_at,
    ndcg_at,
    parse_modes,
    recall_at,
    trec_scores,
)
from keepui_engine.search.significance import bootstrap_ci, paired_test


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


def test_bootstrap_interval_of_a_proportion_matches_the_normal_approximation() -> None:
    # 400 queries, half scoring 1: the bootstrap mean is Binomial(400, 0.5) / 400, whose 95%
    # interval is 0.5 +- 1.96 * sqrt(0.25 / 400) = [0.451, 0.549]
    low, high = bootstrap_ci([1.0] * 200 + [0.0] * 200)
    assert low == pytest.approx(0.451, abs=0.006) and high == pytest.approx(0.549, abs=0.006)
    assert bootstrap_ci([0.7, 0.7, 0.7]) == pytest.approx((0.7, 0.7))
    assert bootstrap_ci([0.3]) == (0.3, 0.3)


def test_paired_randomization_test_against_exact_enumeration() -> None:
    ours = [0.5, 0.9, 0.4, 0.8, 1.0, 0.2]
    ref = [0.4, 0.6, 0.5, 0.4, 0.5, 0.2]
    diffs = [a - b for a, b in zip(ours, ref, strict=True)]
    observed = abs(sum(diffs))
    # every one of the 2^6 sign assignments is equally likely under the null hypothesis
    extreme = sum(
        abs(sum(d * s for d, s in zip(diffs, signs, strict=True))) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=len(diffs))
    )
    exact = extreme / 2 ** len(diffs)
    got = paired_test(ours, ref)
    assert got.p == pytest.approx(exact, abs=0.01)
    assert got.delta == pytest.approx(sum(diffs) / len(diffs))
    assert (got.wins, got.losses) == (4, 1)
    assert got.low <= got.delta <= got.high
    same = paired_test(ref, ref)
    assert (same.delta, same.p) == (0.0, 1.0)


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = {
        "q1": "solar panels on the roof of the barn",  # the query is a document too
        "d1": "photovoltaic cells and solar energy on farm buildings",
        "d2": "a recipe for apple pie with cinnamon",
        "d3": "the barn roof needs new solar panels",
    }
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": docs["q1"]}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def test_eval_drops_a_querys_own_id_as_beir_does(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "beir")
    store = make_fake_store(tmp_path / "store")
    dropped = evaluate(folder, modes=["bm25"], store=store)
    kept = evaluate(folder, modes=["bm25"], store=store, ignore_identical_ids=False)
    assert dropped.identical_ids == "dropped" and kept.identical_ids == "kept"
    run_kept = [d for d, _ in kept.runs["bm25"]["q1"]]
    run_dropped = [d for d, _ in dropped.runs["bm25"]["q1"]]
    assert run_kept[0] == "q1" and run_dropped == [d for d in run_kept if d != "q1"]
    rel = {"d1": 1}
    assert dropped.modes["bm25"]["ndcg@10"] == pytest.approx(ndcg_at(run_dropped, rel))
    assert kept.modes["bm25"]["ndcg@10"] == pytest.approx(ndcg_at(run_kept, rel))
    assert dropped.modes["bm25"]["ndcg@10"] > kept.modes["bm25"]["ndcg@10"]


def test_eval_reports_intervals_and_compares_with_the_reference(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "beir")
    result = evaluate(
        folder, modes=["bm25", "dense"], store=make_fake_store(tmp_path / "s"), compare="dense"
    )
    assert result.reference == "dense" and set(result.compared) == {"bm25"}
    low, high = result.intervals["bm25"]["ndcg@10"]
    assert low == high == result.modes["bm25"]["ndcg@10"]  # one query: nothing to resample
    delta = result.modes["bm25"]["ndcg@10"] - result.modes["dense"]["ndcg@10"]
    assert result.compared["bm25"]["delta"] == pytest.approx(delta)
    assert json.loads(json.dumps(result.to_dict()))["compared"]["bm25"]["p"] <= 1.0


def test_eval_modes_name_a_fusion_and_bad_ones_are_usage_errors() -> None:
    assert parse_modes(["dense", "hybrid:rrf"]) == (["dense", "hybrid:rrf"], "dense")
    assert parse_modes(None) == (["dense", "bm25", "hybrid"], "hybrid")
    assert parse_modes(["bm25"], compare="hybrid") == (["bm25", "hybrid"], "hybrid")
    for bad in ("dense:rrf", "hybrid:max", "sparse"):
        with pytest.raises(UsageError, match="--mode"):
            parse_modes([bad])


def test_a_folder_that_is_not_beir_names_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(UsageError, match=r"queries\.jsonl, qrels/test\.tsv"):
        beir_files(tmp_path)
