"""`keepui find QUERY --why ID`: the rank in each channel and the step that removed the id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli as run


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir run on DuckDB and on PostgreSQL."""
    return backend_dir


@pytest.fixture(scope="module")
def filled(module_backend_dir: Path) -> Path:
    """Four notes the tests here only search, on DuckDB and on PostgreSQL."""
    store_dir = module_backend_dir
    notes = {
        "a": "lazy fox sleeps",
        "b": "lazy dog sleeps",
        "c": "quick fox runs far",
        "d": "tea and biscuits",
    }
    for doc_id, text in notes.items():
        tag = ["-t", "kind=fox"] if "fox" in text else []
        assert run(store_dir, "put", text, "-i", doc_id, *tag).returncode == 0
    return store_dir


def why(store: Path, *args: str) -> dict[str, object]:
    result = run(store, "find", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_shown_hit_reports_its_rank_in_each_channel(filled: Path) -> None:
    doc = why(filled, "lazy fox", "--why", "a", "--mode", "hybrid")
    assert doc["removed_by"] is None and doc["rank"] == 1 and doc["schema"] == 1
    channels = doc["channels"]
    assert channels["dense"]["rank"] == 1 and channels["bm25"]["rank"] == 1  # type: ignore[index]


def test_tag_filter_limit_and_not_retrieved(filled: Path) -> None:
    assert why(filled, "lazy", "--why", "b", "-t", "kind=fox")["removed_by"] == "tag"
    limited = why(filled, "lazy fox", "--why", "c", "-n", "1", "--mode", "hybrid")
    assert limited["removed_by"] == "limit" and limited["rank"] is None
    assert why(filled, "biscuits", "--why", "a", "--mode", "bm25")["removed_by"] == "not_retrieved"
    human = run(filled, "find", "lazy", "--why", "b", "-t", "kind=fox")
    assert human.returncode == 0 and "tag" in human.stdout


def test_unknown_id_is_not_found(filled: Path) -> None:
    result = run(filled, "find", "lazy", "--why", "nope")
    assert result.returncode == 2 and "nope" in result.stderr


def test_min_score_hides_hits_and_why_says_so(filled: Path) -> None:
    everything = why(filled, "lazy fox", "-n", "10")
    scores = {h["id"]: h["score"] for h in everything["hits"]}  # type: ignore[index]
    ranked = sorted(scores.values(), reverse=True)
    cut = (ranked[1] + ranked[2]) / 2  # keep the best two
    shown = why(filled, "lazy fox", "--min-score", str(cut))
    assert len(shown["hits"]) == 2 and shown["hidden"]["threshold"] == len(scores) - 2  # type: ignore[arg-type]
    assert any("min-score" in n for n in shown["notes"])  # type: ignore[union-attr]
    worst = min(scores, key=scores.get)  # type: ignore[arg-type]
    story = why(filled, "lazy fox", "--why", worst, "--min-score", str(cut))
    assert story["removed_by"] == "threshold"


def test_find_pipeline_flags_through_the_cli(store_dir: Path) -> None:
    for doc in ("old", "new"):
        assert run(store_dir, "put", "quarterly budget review notes", "-i", doc).returncode == 0
    assert run(store_dir, "put", "budget for the garden shed", "-i", "shed").returncode == 0
    folded = why(store_dir, "quarterly budget review")
    assert [h["id"] for h in folded["hits"]][0] == "new" and folded["hidden"]["dedup"] == 1  # type: ignore[index]
    assert folded["hits"][0]["duplicates"] == ["old"]  # type: ignore[index]
    both = why(store_dir, "quarterly budget review", "--no-dedup", "--fusion", "rrf")
    assert {"old", "new"} <= {h["id"] for h in both["hits"]}  # type: ignore[union-attr]
    for h in both["hits"]:  # type: ignore[union-attr]
        s = h["scores"]
        ranks = [r for r in (s["dense_rank"], s["bm25_rank"]) if r]
        assert s["fused"] == pytest.approx(sum(1 / (60 + r) for r in ranks))
    recent = why(store_dir, "quarterly budget review", "--no-dedup", "--rerank", "recency")
    assert [h["id"] for h in recent["hits"]] == ["shed", "new", "old"]  # type: ignore[union-attr]
    bad = run(store_dir, "find", "budget", "--rerank", "random")
    assert bad.returncode == 1 and "--rerank" in bad.stderr
