"""Tuning end to end with the real model on a small store built here: the experiment's
default configuration scores exactly as `keepui eval --judged` does, and a configuration that
changes the fusion is measured, compared and optimized through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

from keepui_engine import PutSpec, open_workbench

pytestmark = pytest.mark.model

NOTES = {
    "db-choice": "We decided to store everything in DuckDB because one file is easy to back up.",
    "db-pg": "PostgreSQL with pgvector serves the team store; many machines write to it.",
    "vectors": "Vector search uses usearch HNSW once the store grows past thirty thousand items.",
    "bm25": "Full text search is BM25 with Snowball stemming over every stored version.",
    "marathon": "Training plan: long run on Sunday, intervals on Tuesday, rest on Friday.",
    "shoes": "New running shoes: cushioned for the long runs, light ones for intervals.",
    "recipe": "Bake the sourdough at 230 degrees for twenty minutes with the lid on.",
    "starter": "Feed the sourdough starter twice a day with rye flour and water.",
    "meeting": "Standup: Alice is blocked on the login bug, Bob reviews the payment service.",
    "login": "The login bug: sessions expire early because the token clock is skewed.",
    "keys": "Signing keys rotate every month; the old key stays valid for a week.",
    "budget": "The quarter's budget moves two engineers to the payment service.",
}
JUDGED = {
    "which database did we choose": {"db-choice": 3, "db-pg": 1, "vectors": 0},
    "how does text search work": {"bm25": 3, "vectors": 1},
    "running schedule for the race": {"marathon": 3, "shoes": 1},
    "how long to bake bread": {"recipe": 3, "starter": 1},
    "who is stuck on the authentication problem": {"meeting": 3, "login": 2},
    "key rotation policy": {"keys": 3},
    "payment service staffing": {"budget": 3, "meeting": 1},
}


def js(result: Any) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("tuning-real") / "store"
    with open_workbench(store, own=True) as wb:
        wb.put_many([PutSpec(text, id=i) for i, text in NOTES.items()])
        for query, grades in JUDGED.items():
            for doc, grade in grades.items():
                wb.judge(query, doc, grade)
    with (store / "keepui.toml").open("a") as fh:
        fh.write('\n[search.configs.words]\nfusion = "rrf"\nbm25_weight = 3.0\n')
    assert run_cli(store, "queryset", "add", "mine", "--from-judgments").returncode == 0
    return store


def test_the_default_configuration_scores_as_eval_judged(real_store: Path) -> None:
    judged = js(run_cli(real_store, "eval", "--judged", "-m", "hybrid", "--json"))
    run = js(
        run_cli(
            real_store,
            "experiment",
            "run",
            "--queries",
            "mine",
            "--config",
            "default",
            "--config",
            "words",
            "--json",
        )
    )
    assert run["judged"] == judged["queries"] == len(JUDGED)
    assert run["scores"]["default"]["ndcg@10"] == pytest.approx(
        judged["modes"]["hybrid"]["ndcg@10"], abs=1e-12
    )
    assert run["scores"]["default"]["recall@100"] == pytest.approx(
        judged["modes"]["hybrid"]["recall@100"], abs=1e-12
    )
    for row in run["per_query"].values():
        assert row["scores"]["default"]["ndcg@10"] == pytest.approx(
            judged["per_query"]["hybrid"][row["query"]]["ndcg@10"], abs=1e-12
        )
    assert run["scores"]["default"]["ndcg@10"] > 0.8  # the real model finds these
    words = [t for t in run["paired"] if t["metric"] == "ndcg@10"][0]
    assert (words["a"], words["b"]) == ("words", "default") and 0 < words["p"] <= 1


def test_compare_and_optimize_with_the_real_model(real_store: Path) -> None:
    doc = js(
        run_cli(
            real_store,
            "experiment",
            "compare",
            "-q",
            "mine",
            "-c",
            "default",
            "-c",
            "words",
            "--json",
        )
    )
    assert doc["queries"] == len(JUDGED) and 0 < doc["rbo"] <= 1
    opt = js(run_cli(real_store, "experiment", "optimize", "-q", "mine", "--folds", "3", "--json"))
    assert opt["judged"] == len(JUDGED) and opt["verdict"] in ("gain", "none", "loss")
    low, high = opt["paired"]["low"], opt["paired"]["high"]
    assert (opt["gain"] is None) == (low <= 0)  # an interval that spans 0 is no gain
    assert high >= low
