"""Facets, as-of search and relevance judgments through the CLI (real subprocesses, fake model)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import pytest
from support import run_cli


def js(result: object) -> dict:
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    return json.loads(result.stdout)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def store(module_backend_dir: Path) -> Path:
    """The seeded store most tests here share, on DuckDB and on PostgreSQL."""
    path = module_backend_dir
    notes = [
        ("keys", "Key rotation happens monthly for internal services", ["topic=auth", "team=ops"]),
        ("tokens", "Gateway tokens expire after an hour", ["topic=auth", "team=web"]),
        ("bread", "Sourdough bread with a long fermentation", ["topic=food"]),
        ("plan", "Plan for the quarter", ["topic=plan", "team=ops", "team=web"]),
    ]
    for doc, text, tags in notes:
        args = [x for t in tags for x in ("-t", t)]
        assert run_cli(path, "put", text, "-i", doc, *args).returncode == 0
    assert run_cli(path, "put", "*.tmp", "-i", ".ignore", "-t", "topic=system").returncode == 0
    return path


def test_facets_count_values_of_current_documents(store: Path) -> None:
    doc = js(run_cli(store, "list", "--facets", "--json"))
    assert doc == {
        "schema": 1,
        "facets": {
            "team": {"ops": 2, "web": 2},
            "topic": {"auth": 2, "food": 1, "plan": 1},
        },
    }  # system documents and system tags are left out
    only_auth = js(run_cli(store, "list", "-t", "topic=auth", "--facets", "--json"))
    assert only_auth["facets"] == {"team": {"ops": 1, "web": 1}, "topic": {"auth": 2}}
    text = run_cli(store, "list", "--facets").stdout
    assert "topic:" in text and "2  auth" in text


def test_as_of_searches_the_versions_current_then(backend_dir: Path) -> None:
    store = backend_dir
    assert run_cli(store, "put", "Key rotation happens monthly", "-i", "keys").returncode == 0
    # local time, as a user types it; the next put is a new process, so strictly later
    then = datetime.now().isoformat(timespec="microseconds")
    assert run_cli(store, "put", "Key rotation happens weekly", "-i", "keys").returncode == 0
    assert run_cli(store, "put", "Key rotation for new services", "-i", "later").returncode == 0
    old = js(run_cli(store, "find", "key rotation", "--as-of", then, "--json"))
    assert [(h["id"], h["matched"]) for h in old["hits"]] == [("keys", "keys@V{1}")]
    assert old["hits"][0]["summary"] == "Key rotation happens monthly"
    assert any(n.startswith("as of ") for n in old["notes"])
    got = js(run_cli(store, "get", old["hits"][0]["matched"], "--json"))
    assert got["text"] == "Key rotation happens monthly"
    now = js(run_cli(store, "find", "key rotation", "--json"))
    assert {h["id"] for h in now["hits"]} == {"keys", "later"}
    before = js(run_cli(store, "find", "key rotation", "--as-of", "2001-01-01", "--json"))
    assert before["hits"] == []
    bad = run_cli(store, "find", "x", "--as-of", "last tuesday", "--json")
    assert bad.returncode == 1 and "--as-of 'last tuesday'" in bad.stderr


def ndcg10(ranked: list[str], grades: dict[str, int]) -> float:
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(grades.values(), reverse=True)
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:10]) if g)


def test_judgments_make_a_test_collection(store: Path, tmp_path: Path) -> None:
    empty = run_cli(store, "eval", "--judged")
    assert empty.returncode == 1 and "no judgments" in empty.stderr
    grades = {("key rotation", "keys"): 3, ("key rotation", "tokens"): 1, ("bread", "bread"): 2}
    for (query, doc), grade in grades.items():
        made = js(run_cli(store, "judge", query, doc, "--grade", str(grade), "--json"))
        assert (made["query"], made["id"], made["grade"]) == (query, doc, grade)
        assert made["qid"].startswith("q") and made["when"]
    assert run_cli(store, "judge", "x", "no-such-id", "--grade", "1").returncode == 2
    assert run_cli(store, "judge", "x", "keys", "--grade", "4").returncode == 1
    listed = js(run_cli(store, "judgments", "--json"))["judgments"]
    assert len(listed) == 3
    qrels = tmp_path / "mine.qrels"
    queries = tmp_path / "queries.jsonl"
    assert (
        run_cli(
            store, "judgments", "export", "--qrels", str(qrels), "--queries", str(queries)
        ).returncode
        == 0
    )
    rows = [line.split() for line in qrels.read_text().splitlines()]
    assert sorted((r[2], int(r[3])) for r in rows) == sorted(
        (doc, g) for (_, doc), g in grades.items()
    )
    assert all(r[1] == "0" for r in rows)
    qids = {
        json.loads(line)["text"]: json.loads(line)["_id"]
        for line in queries.read_text().splitlines()
    }
    assert {r[0] for r in rows} == set(qids.values())
    result = js(run_cli(store, "eval", "--judged", "--json"))
    assert result["queries"] == 2 and set(result["modes"]) == {"dense", "bm25", "hybrid"}
    for mode in result["modes"]:
        per_query = result["per_query"][mode]
        for query in ("key rotation", "bread"):
            ranked = js(
                run_cli(store, "find", query, "-m", mode, "-n", "100", "--no-dedup", "--json")
            )
            mine = {d: g for (q, d), g in grades.items() if q == query}
            expected = ndcg10([h["id"] for h in ranked["hits"]], mine)
            assert per_query[query]["ndcg@10"] == pytest.approx(expected, abs=1e-4)
        mean = sum(q["ndcg@10"] for q in per_query.values()) / 2
        assert result["modes"][mode]["ndcg@10"] == pytest.approx(mean)
    assert run_cli(store, "judge", "bread", "bread", "--remove").returncode == 0
    assert len(js(run_cli(store, "judgments", "--json"))["judgments"]) == 2
