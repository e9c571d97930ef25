"""The tuning commands as a person runs them (real processes, fake model): exit codes, one
JSON document with its schema on stdout, diagnostics on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import make_fake_store, run_cli

from keepui_engine import PutSpec, open_workbench

NOTES = {
    "keys": "Key rotation happens monthly for internal services",
    "sign": "Rotate the signing keys every month",
    "tokens": "Gateway tokens expire after an hour",
    "bread": "Sourdough bread with a long fermentation",
    "bake": "Bread baking temperature and time",
    "db": "We chose DuckDB as the database",
}
JUDGED = {
    "key rotation": {"keys": 3, "sign": 2},
    "bread baking": {"bake": 3, "bread": 2},
    "token expiry": {"tokens": 3},
    "which database": {"db": 3},
}


def js(result: Any) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)  # exactly one document
    assert doc["schema"] == 1
    return doc  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_fake_store(tmp_path_factory.mktemp("tuning") / "store")
    with (path / "keepui.toml").open("a") as fh:
        fh.write('\n[search.configs.words]\nfusion = "rrf"\nbm25_weight = 2.0\n')
    with open_workbench(path, own=True) as wb:
        wb.put_many([PutSpec(t, id=i) for i, t in NOTES.items()])
        for query, grades in JUDGED.items():
            for doc, grade in grades.items():
                wb.judge(query, doc, grade)
    assert run_cli(path, "queryset", "add", "mine", "--from-judgments").returncode == 0
    return path


def test_config_lists_the_configurations(store: Path) -> None:
    doc = js(run_cli(store, "config", "--configs", "--json"))
    assert [c["name"] for c in doc["configs"]] == ["default", "words"]
    assert doc["configs"][1]["changes"] == {"fusion": "rrf", "bm25_weight": 2.0}
    text = run_cli(store, "config", "--configs")
    assert text.stdout.splitlines()[1].split() == ["words", "fusion=rrf", "bm25_weight=2.0"]


def test_find_with_a_configuration_and_an_unknown_one(store: Path) -> None:
    assert js(run_cli(store, "find", "bread", "--config", "words", "--json"))["hits"]
    bad = run_cli(store, "find", "bread", "--config", "nope", "--json")
    assert bad.returncode == 1
    assert "known: default, words" in bad.stderr
    assert json.loads(bad.stdout)["error"]["kind"] == "usage"


def test_queryset_commands(store: Path, tmp_path: Path) -> None:
    shown = js(run_cli(store, "queryset", "show", "mine", "--json"))
    assert shown["count"] == 4 and shown["queries"][0]["judgments"] == 2
    listing = tmp_path / "q.txt"
    listing.write_text("bread\ntokens\n")
    added = js(run_cli(store, "queryset", "add", "plain", str(listing), "--json"))
    assert (added["action"], added["source"], added["count"]) == ("created", "file", 2)
    names = [s["name"] for s in js(run_cli(store, "queryset", "list", "--json"))["querysets"]]
    assert names == ["mine", "plain"]
    assert run_cli(store, "queryset", "show", "ghost").returncode == 2
    assert run_cli(store, "queryset", "add", "x").returncode == 1  # no source
    assert run_cli(store, "queryset", "add", "x", "--last", "3", "--from-judgments").returncode == 1
    assert "plain" not in run_cli(store, "list").stdout  # a system document


def test_judgments_import_reports_counts(store: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tdb\t2\n1\tghost\t1\n2\tkeys\t1\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "1", "text": "duckdb database"}\n')
    args = ("judgments", "import", "--qrels", str(qrels), "--queries", str(queries))
    doc = js(run_cli(store, *args, "--json"))
    assert (doc["recorded"], doc["missing_ids"], doc["unknown_queries"]) == (1, 1, 1)
    text = run_cli(store, *args)
    assert text.returncode == 0 and text.stdout == ""
    assert "1 document id(s) the store does not have: ghost" in text.stderr


def test_experiment_run_list_show(store: Path) -> None:
    judged = js(run_cli(store, "eval", "--judged", "-m", "hybrid", "--json"))
    run = js(
        run_cli(store, "experiment", "run", "-q", "mine", "-c", "default", "-c", "words", "--json")
    )
    assert run["configs"] == ["default", "words"] and run["judged"] == 4
    assert set(run["scores"]["default"]) == {"ndcg@10", "p@5", "mrr@10", "recall@100"}
    assert {"paired", "differences", "pool", "intervals", "unjudged"} <= set(run)
    for row in run["per_query"].values():  # eval --judged scores every judged query
        assert row["scores"]["default"]["ndcg@10"] == pytest.approx(
            judged["per_query"]["hybrid"][row["query"]]["ndcg@10"], abs=1e-12
        )
    shown = js(run_cli(store, "experiment", "show", run["id"], "--json"))
    assert shown == run
    listed = js(run_cli(store, "experiment", "list", "--json"))["experiments"]
    assert run["id"] in [e["id"] for e in listed]
    text = run_cli(store, "experiment", "list")
    assert text.returncode == 0 and "words" in text.stdout
    assert run_cli(store, "experiment", "show", "19990101T000000Z").returncode == 2
    bad = run_cli(store, "experiment", "run", "-q", "mine", "-c", "nope")
    assert bad.returncode == 1 and "known: default, words" in bad.stderr
    assert run_cli(store, "experiment", "run", "-q", "mine", "--metric", "map@3").returncode == 1


def test_experiment_compare(store: Path) -> None:
    doc = js(
        run_cli(
            store, "experiment", "compare", "-q", "mine", "-c", "default", "-c", "words", "--json"
        )
    )
    assert doc["queries"] == 4 and doc["k"] == 10 and 0 <= doc["rbo"] <= 1
    assert {"qid", "query", "jaccard", "rbo", "only_a", "only_b"} == set(doc["per_query"][0])
    one = run_cli(store, "experiment", "compare", "-q", "mine", "-c", "default")
    assert one.returncode == 1 and "exactly two" in one.stderr


def test_optimize_refuses_with_too_few_judgments_then_runs(store: Path) -> None:
    refused = run_cli(store, "experiment", "optimize", "-q", "mine", "--json")
    assert refused.returncode == 1
    assert "has 4 judged queries; --folds 5 needs at least 10" in refused.stderr
    assert json.loads(refused.stdout)["error"]["kind"] == "usage"
    doc = js(run_cli(store, "experiment", "optimize", "-q", "mine", "--folds", "2", "--json"))
    assert doc["judged"] == 4 and doc["verdict"] in ("gain", "none", "loss")
    assert doc["saved"] is None and "heldout_ci" in doc
    text = run_cli(store, "experiment", "optimize", "-q", "mine", "--folds", "2")
    assert "held-out ndcg@10" in text.stdout and "not saved" in text.stderr


def test_a_bad_configuration_in_keepui_toml(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    with (store / "keepui.toml").open("a") as fh:
        fh.write('\n[search.configs.x]\nfusion = "mean"\n')
    bad = run_cli(store, "config", "--configs")
    assert bad.returncode == 2 and "[search.configs.x] fusion = 'mean'" in bad.stderr
    (store / "keepui.toml").write_text(
        (store / "keepui.toml").read_text().replace('fusion = "mean"', "recency_weight = 3")
    )
    number = run_cli(store, "config", "--configs")
    assert number.returncode == 1 and "recency_weight = 3 is out of range" in number.stderr


def test_why_ranks_under_the_configuration_and_its_limit(tmp_path: Path) -> None:
    path = make_fake_store(tmp_path / "store")
    with (path / "keepui.toml").open("a") as fh:
        fh.write('\n[search.configs.top1]\nmode = "bm25"\nlimit = 1\n')
    with open_workbench(path, own=True) as wb:
        wb.put_many([PutSpec(t, id=i) for i, t in NOTES.items()])
    plain = json.loads(run_cli(path, "find", "bread", "--why", "bread", "--json").stdout)
    assert plain["mode"] == "hybrid" and plain["removed_by"] is None
    story = js(run_cli(path, "find", "bread", "--config", "top1", "--why", "bread", "--json"))
    assert story["mode"] == "bm25" and list(story["channels"]) == ["bm25"]
    assert story["channels"]["bm25"]["rank"] == 2  # tied with bake, which sorts first
    assert story["rank"] is None and story["removed_by"] == "limit"  # the configuration's 1
