"""Tuning on the fake embedder: query sets as versioned system documents, judgments imported
as the inverse of their export, experiments scored as `eval --judged` scores, the pairwise
overlap measures, the sweep ranking as find does, and the optimizer's folds and refusal."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import (
    ConfigError,
    FindQuery,
    NotFound,
    PutSpec,
    UsageError,
    Workbench,
    open_workbench,
)
from keepui_engine.client.tuning.metrics import jaccard, parse_metrics, per_query, rbo
from keepui_engine.client.tuning.optimize import folds_of, grid
from keepui_engine.search.evaluation import mrr_at, ndcg_at, recall_at
from keepui_engine.search.judgments import qid, qrels_lines, queries_lines

NOTES = {
    "keys": "Key rotation happens monthly for internal services",
    "sign": "Rotate the signing keys every month, and the tokens weekly",
    "tokens": "Gateway tokens expire after an hour unless refreshed",
    "refresh": "Token expiry and the refresh policy of the gateway",
    "bread": "Sourdough bread with a long fermentation",
    "bake": "Bread baking temperature and time for a crusty loaf",
    "plan": "Plan for the quarter with ops and web teams",
    "meeting": "Quarterly planning meeting notes and decisions",
    "db": "We chose DuckDB as the database: one file to back up",
    "vectors": "Vector search with usearch HNSW past thirty thousand items",
    "run": "Training plan: long run on Sunday, intervals on Tuesday",
    "cake": "Chocolate cake with a bread flour crumb",
}
JUDGED = {
    "key rotation": {"keys": 3, "sign": 2, "tokens": 0},
    "bread baking": {"bake": 3, "bread": 2, "cake": 1},
    "token expiry": {"tokens": 3, "refresh": 2},
    "quarter plan": {"plan": 3, "meeting": 2, "run": 0},
    "which database": {"db": 3},
    "vector index": {"vectors": 3},
}
CONFIGS = (
    '\n[search.configs.words]\nfusion = "rrf"\nbm25_weight = 2.0\n'
    "\n[search.configs.prior]\nscore_prior = 30.0\ndense_weight = 0.5\n"
)


def _seed(path: Path) -> Path:
    store = make_fake_store(path)
    with (store / "keepui.toml").open("a") as fh:
        fh.write(CONFIGS)
    with open_workbench(store, own=True) as wb:
        wb.put_many([PutSpec(text, id=i) for i, text in NOTES.items()])
        for query, grades in JUDGED.items():
            for doc, grade in grades.items():
                wb.judge(query, doc, grade)
    return store


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[Workbench]:
    with open_workbench(_seed(tmp_path / "s"), own=True) as wb:
        yield wb


def test_query_sets_are_versioned_system_documents(seeded: Workbench, tmp_path: Path) -> None:
    wb = seeded
    made = wb.tuning.add_queryset("mine", from_judgments=True)
    assert (made.action, made.version, made.id) == ("created", 1, ".queryset/mine")
    assert made.queries == sorted(JUDGED)
    assert wb.tuning.add_queryset("mine", from_judgments=True).action == "unchanged"
    listing = tmp_path / "q.txt"
    listing.write_text("# my queries\nkey rotation\n\nbread   baking\nkey rotation\nnew query\n")
    again = wb.tuning.add_queryset("mine", path=listing)
    assert (again.action, again.version) == ("updated", 2)
    assert again.queries == ["key rotation", "bread baking", "new query"]
    shown = wb.tuning.queryset("mine")
    assert shown.judged == {"key rotation": 3, "bread baking": 3, "new query": 0}
    assert shown.to_dict()["queries"][0] == {
        "qid": qid("key rotation"),
        "query": "key rotation",
        "judgments": 3,
    }
    assert [v.version for v in wb.history(".queryset/mine")] == [2, 1]
    item = wb.get(".queryset/mine")
    assert item.tags["type"] == "queryset" and item.tags["source"] == "file"
    # system documents: neither find nor list shows them unless asked
    assert all(not h.id.startswith(".") for h in wb.find("key rotation", limit=50).hits)
    assert ".queryset/mine" not in [i.id for i in wb.list_items(limit=100)]
    assert [s.name for s in wb.tuning.querysets()] == ["mine"]
    with pytest.raises(NotFound, match="no query set 'other'; there are: mine"):
        wb.tuning.queryset("other")


def test_query_sets_from_jsonl_and_history_and_bad_input(seeded: Workbench, tmp_path: Path) -> None:
    wb = seeded
    beir = tmp_path / "queries.jsonl"
    beir.write_text('{"_id": "1", "text": "vector index"}\n{"_id": "2", "text": "db"}\n')
    assert wb.tuning.add_queryset("b", path=beir).queries == ["vector index", "db"]
    for q in ("alpha", "beta", "alpha", "gamma"):
        wb.record_search(FindQuery(q), [])
    assert wb.tuning.add_queryset("h", from_history=True, last=2).queries == ["gamma", "alpha"]
    with pytest.raises(UsageError, match="give one source"):
        wb.tuning.add_queryset("x", from_history=True, from_judgments=True)
    with pytest.raises(UsageError, match="letters, digits"):
        wb.tuning.add_queryset("a b", from_judgments=True)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(UsageError, match="no queries to store"):
        wb.tuning.add_queryset("e", path=empty)


def test_judgments_import_is_the_inverse_of_export(seeded: Workbench, tmp_path: Path) -> None:
    found = seeded.judgments()
    qrels = tmp_path / "mine.qrels"
    queries = tmp_path / "mine.jsonl"
    qrels.write_text("".join(line + "\n" for line in qrels_lines(found)))
    queries.write_text("".join(json.dumps(r) + "\n" for r in queries_lines(found)))
    other = make_fake_store(tmp_path / "other")
    with open_workbench(other, own=True) as wb:
        wb.put_many([PutSpec(t, id=i) for i, t in NOTES.items() if i != "run"])
        got = wb.tuning.import_judgments(qrels, queries)
        assert (got.recorded, got.qrels, got.missing_ids) == (len(found) - 1, len(found), ["run"])
        assert got.queries == len(JUDGED)
        mine = {(j.query, j.id, j.grade) for j in wb.judgments()}
    assert mine == {(j.query, j.id, j.grade) for j in found if j.id != "run"}


def test_judgments_import_of_beir_files_and_bad_lines(seeded: Workbench, tmp_path: Path) -> None:
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n7\tdb\t1\n7\tnope\t1\n9\tkeys\t1\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "7", "text": "what database"}\n')
    got = seeded.tuning.import_judgments(qrels, queries)
    assert got.to_dict() == {
        "recorded": 1,
        "qrels": 3,
        "queries": 1,
        "missing_ids": 1,
        "missing_examples": ["nope"],
        "unknown_queries": 1,
        "unknown_examples": ["9"],
    }
    assert [(j.id, j.grade) for j in seeded.judgments("what database")] == [("db", 1)]
    qrels.write_text("7\tdb\t5\n")
    with pytest.raises(UsageError, match=r"test.tsv:1: grade 5"):
        seeded.tuning.import_judgments(qrels, queries)
    qrels.write_text("7 db 1\n7 db\n")
    with pytest.raises(UsageError, match=r"test.tsv:2: expected"):
        seeded.tuning.import_judgments(qrels, queries)


def test_metrics_by_hand_and_against_our_own() -> None:
    assert parse_metrics(None) == ["ndcg@10", "p@5", "mrr@10", "recall@100"]
    assert parse_metrics(["NDCG@5", "P@3", "ndcg@5"]) == ["ndcg@5", "p@3"]
    with pytest.raises(UsageError, match="--metric 'map@10'"):
        parse_metrics(["map@10"])
    rel = {"a": 1, "b": 2, "z": 0}
    ranked = ["x", "b", "y", "a", "w", "v"]
    got = per_query({"q": ranked, "unjudged": ["a"]}, {"q": rel}, parse_metrics(None))
    assert list(got) == ["q"]  # only judged queries are scored
    assert got["q"]["ndcg@10"] == pytest.approx(ndcg_at(ranked, rel))
    assert got["q"]["p@5"] == pytest.approx(2 / 5)
    assert got["q"]["mrr@10"] == pytest.approx(mrr_at(ranked, rel)) == pytest.approx(0.5)
    assert got["q"]["recall@100"] == pytest.approx(recall_at(ranked, rel)) == 1.0
    assert per_query({"q": ["x", "b"]}, {"q": rel}, ["mrr@1"])["q"]["mrr@1"] == 0.0


def test_overlap_measures_by_hand() -> None:
    assert jaccard(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(2 / 4)
    assert jaccard([], []) == 1.0
    assert rbo(list("abcdef"), list("abcdef")) == pytest.approx(1.0)
    assert rbo(list("abc"), list("xyz")) == 0.0
    assert rbo([], []) == 1.0 and rbo(["a"], []) == 0.0
    # eq. 32 by hand, equal lengths k = 3: X = (0, 2, 3)
    p = 0.9
    assert rbo(list("abc"), list("bac")) == pytest.approx(
        (1 - p) / p * (0 + 2 / 2 * p**2 + 3 / 3 * p**3) + 3 / 3 * p**3
    )
    assert rbo(list("abcde"), list("abc")) == pytest.approx(1.0)  # a prefix agrees throughout
    assert rbo(list("abcd"), list("dcba")) < rbo(list("abcd"), list("abdc")) < 1.0


def test_experiment_scores_as_eval_judged_and_is_stored(seeded: Workbench) -> None:
    wb = seeded
    wb.tuning.add_queryset("mine", path=None, from_judgments=True)
    reference = wb.eval_judged(["hybrid", "hybrid:rrf"])
    exp = wb.tuning.run("mine", ["default", "words"])
    assert exp.judged == exp.queries == len(JUDGED)
    assert exp.scores["default"]["ndcg@10"] == pytest.approx(
        reference.modes["hybrid"]["ndcg@10"], abs=1e-12
    )
    assert exp.scores["default"]["recall@100"] == pytest.approx(
        reference.modes["hybrid"]["recall@100"], abs=1e-12
    )
    low, high = exp.intervals["words"]["ndcg@10"]
    assert low <= exp.scores["words"]["ndcg@10"] <= high
    pairs = {(t["a"], t["b"], t["metric"]) for t in exp.paired}
    assert ("words", "default", "ndcg@10") in pairs and len(pairs) == 4
    diffs = exp.differences("words", "default")
    assert [d["delta"] for d in diffs] == sorted((d["delta"] for d in diffs), reverse=True)
    for q, ids in exp.unjudged["default"].items():
        judged = {j.id for j in wb.judgments() if j.qid == q}
        assert not set(ids) & judged and len(ids) <= 10
    stored = wb.tuning.experiment("latest")
    assert stored.id == exp.id and stored.id.startswith(".experiment/")
    assert stored.to_dict() == exp.to_dict()  # the queries' words come back from the set
    assert "query" not in json.loads(wb.get(exp.id).text or "")["per_query"][qid("key rotation")]
    second = wb.tuning.run("mine", ["default"], ["ndcg@5"])
    assert [e.id for e in wb.tuning.experiments()] == [exp.id, second.id]
    assert second.id != exp.id and wb.get(exp.id).tags["type"] == "experiment"
    assert wb.get(exp.id).tags["config"] == ["default", "words"]


def test_experiment_refusals(seeded: Workbench, tmp_path: Path) -> None:
    wb = seeded
    listing = tmp_path / "q.txt"
    listing.write_text("nothing judged here\n")
    wb.tuning.add_queryset("none", path=listing)
    with pytest.raises(UsageError, match="none of the 1 queries of none has judgments"):
        wb.tuning.run("none", ["default"])
    with pytest.raises(UsageError, match="no such search configuration"):
        wb.tuning.run("none", ["default", "missing"])
    with pytest.raises(UsageError, match="give each --config once"):
        wb.tuning.run("none", ["default", "default"])
    with pytest.raises(NotFound, match="no query set 'ghost'"):
        wb.tuning.run("ghost", ["default"])
    with pytest.raises(NotFound, match="no experiment"):
        wb.tuning.experiment("20200101T000000Z")


def test_rescore_follows_new_judgments_and_ranking_is_the_experiments(seeded: Workbench) -> None:
    wb = seeded
    wb.tuning.add_queryset("mine", from_judgments=True)
    exp = wb.tuning.run("mine", ["default", "words"])
    same = wb.tuning.rescore(exp, "key rotation")  # nothing changed: the same figures
    assert same.to_dict() == exp.to_dict()
    key = qid("key rotation")
    ranked = wb.tuning.ranking("key rotation", "words")
    pool = exp.unjudged["words"][key]
    assert pool == [h.id for h in ranked.hits if h.id not in JUDGED["key rotation"]][: len(pool)]
    assert len(ranked.hits) <= 10 and pool
    wb.judge("key rotation", pool[0], 3)
    again = wb.tuning.rescore(exp, "key rotation")
    assert pool[0] not in again.unjudged["words"][key]
    assert again.per_query[key]["scores"] != exp.per_query[key]["scores"]
    assert again.scores != exp.scores and again.judged == exp.judged
    assert again.id == exp.id and wb.tuning.experiment("latest").to_dict() == exp.to_dict()
    for doc in [*JUDGED["key rotation"], pool[0]]:
        wb.unjudge("key rotation", doc)
    dropped = wb.tuning.rescore(exp, "key rotation")  # no judgments left: no longer scored
    assert key not in dropped.per_query and dropped.judged == exp.judged - 1


def test_compare_needs_no_judgments(seeded: Workbench, tmp_path: Path) -> None:
    wb = seeded
    listing = tmp_path / "q.txt"
    listing.write_text("bread\ntokens\nplan for the quarter\n")
    wb.tuning.add_queryset("plain", path=listing)
    same = wb.tuning.compare("plain", ["default", "words"])
    assert same.to_dict()["queries"] == 3 and 0.0 <= same.rbo <= 1.0
    rows = same.per_query
    assert [r["rbo"] for r in rows] == sorted(r["rbo"] for r in rows)
    for r in rows:
        assert not set(r["only_a"]) & set(r["only_b"])
    with pytest.raises(UsageError, match="exactly two"):
        wb.tuning.compare("plain", ["default"])


def test_the_sweep_ranks_as_find_does(seeded: Workbench) -> None:
    wb = seeded
    queries = list(JUDGED)
    as_config = {None: {}, "words": {"fusion": "rrf", "bm25_weight": 2.0}}
    as_config["prior"] = {"score_prior": 30.0, "dense_weight": 0.5}
    got = wb.call("sweep", queries=queries, grid=list(as_config.values()), depth=10, limit=100)
    for ranked, config in zip(got, as_config, strict=True):
        for text, ids in zip(queries, ranked, strict=True):
            hits = wb.find(text, limit=100, dedup=False, config=config).hits
            assert ids == [h.id for h in hits][:10], (config, text)
    assert got[0] != got[2]  # the prior and the weights change the ranking
    with pytest.raises(ConfigError, match="grid point 1"):
        wb.call("sweep", queries=queries, grid=[{"fusion": "mean"}])


def test_folds_are_seeded_and_balanced() -> None:
    ids = [f"q{i}" for i in range(23)]
    first = folds_of(ids, 5, 15)
    assert first == folds_of(list(reversed(ids)), 5, 15)  # the order given does not matter
    assert first != folds_of(ids, 5, 16)
    sizes = sorted(list(first.values()).count(f) for f in range(5))
    assert sizes == [4, 4, 5, 5, 5]


def test_the_grid_starts_with_the_default(seeded: Workbench) -> None:
    points = grid(seeded.settings)
    assert points[0] == {
        "fusion": "score",
        "dense_weight": 1.0,
        "bm25_weight": 1.0,
        "score_prior": 3.0,
    }
    assert len(points) == len({json.dumps(p, sort_keys=True) for p in points}) == 54


def test_optimize_cross_validates_refuses_and_saves(seeded: Workbench) -> None:
    wb = seeded
    wb.tuning.add_queryset("mine", from_judgments=True)
    with pytest.raises(UsageError, match=r"has 6 judged queries; --folds 5 needs at least 10"):
        wb.tuning.optimize("mine", folds=5)
    with pytest.raises(UsageError, match="2 folds or more"):
        wb.tuning.optimize("mine", folds=1)
    got = wb.tuning.optimize("mine", folds=3, save="tuned")
    assert got.judged == 6 and got.points == 54 and len(got.chosen) == 3
    assert sum(f["queries"] for f in got.chosen) == 6
    default = wb.tuning.run("mine", ["default"])
    assert got.default == pytest.approx(default.scores["default"]["ndcg@10"], abs=1e-12)
    t = got.paired
    assert got.verdict == ("gain" if t["low"] > 0 else "loss" if t["high"] < 0 else "none")
    assert (got.to_dict()["gain"] is None) == (got.verdict != "gain")
    assert not math.isnan(got.heldout) and got.saved == "tuned"
    assert wb.settings.config_path.read_text().count("[search.configs.tuned]") == 1
    from keepui_engine.client.settings import load_settings

    assert load_settings(wb.store).search_configs["tuned"] == got.best


def test_tuning_on_both_backends(backend_dir: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tkeys\t3\n1\tsign\t2\n2\tbread\t3\n2\tx\t1\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "1", "text": "key rotation"}\n{"_id": "2", "text": "bread"}\n')
    with open_workbench(backend_dir, own=True) as wb:
        wb.put_many([PutSpec(t, id=i) for i, t in NOTES.items()])
        got = wb.tuning.import_judgments(qrels, queries)
        assert (got.recorded, got.missing_ids) == (3, ["x"])
        assert wb.tuning.add_queryset("s", from_judgments=True).queries == ["bread", "key rotation"]
        exp = wb.tuning.run("s", ["default"])
        assert exp.judged == 2 and wb.tuning.experiment("latest").id == exp.id
        swept = wb.call("sweep", queries=["bread"], grid=[{}, {"fusion": "rrf"}], depth=3)
        assert swept[0][0] == [h.id for h in wb.find("bread", limit=100, dedup=False).hits][:3]
