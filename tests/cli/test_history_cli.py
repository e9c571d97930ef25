"""`keepui find/context/reflect/flow` answer about now through the CLI (issue 22, rules 1-4):
real subprocesses over a fake-embedder store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli

DRAFT = "Hypothesis: the single point of failure is the message broker everyone depends on."
REVIEWED = "Finding: the broker is replicated; the real weak spot is the DNS resolver."


@pytest.fixture(scope="module")
def aoa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from support import make_fake_store

    store = make_fake_store(tmp_path_factory.mktemp("hist") / "store")
    for args in (
        ("put", DRAFT, "-i", "notes/aoa", "-t", "status=draft"),
        ("put", REVIEWED, "-i", "notes/aoa", "-t", "status=reviewed"),
        ("put", "Lunch on Friday is pizza for everyone.", "-i", "lunch"),
        ("now", "Reviewing the message broker failure analysis"),
    ):
        got = run_cli(store, *args)
        assert got.returncode == 0, got.stderr
    return store


def test_a_filter_on_superseded_tags_finds_nothing(aoa: Path) -> None:
    got = run_cli(aoa, "find", "single point of failure", "-t", "status=draft", "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["schema"] == 1 and doc["hits"] == []
    text = run_cli(aoa, "find", "single point of failure", "-t", "status=draft")
    assert text.returncode == 0 and text.stdout == ""
    assert "no current version matches" in text.stderr and "--history" in text.stderr


def test_history_hit_says_which_version_matched(aoa: Path) -> None:
    got = run_cli(aoa, "find", "message broker", "-t", "status=draft", "--history")
    assert got.returncode == 0, got.stderr
    (line,) = got.stdout.splitlines()
    assert "notes/aoa @V{1}" in line
    assert line.endswith("[matched v1 of 2; the current text differs]")
    doc = json.loads(
        run_cli(aoa, "find", "message broker", "-t", "status=draft", "--history", "--json").stdout
    )
    (hit,) = doc["hits"]
    assert hit["matched"] == "notes/aoa@V{1}" and hit["version"] == 1
    assert hit["archived"] == {"version": 1, "of": 2, "text_differs": True}


def test_default_find_json_names_no_older_version(aoa: Path) -> None:
    for mode in ("dense", "bm25", "hybrid"):
        got = run_cli(aoa, "find", "message broker depends", "-m", mode, "--json")
        hits = json.loads(got.stdout)["hits"]
        assert hits and all("@V{" not in h["matched"] and "archived" not in h for h in hits)


def test_why_says_only_an_older_version_matched(aoa: Path) -> None:
    got = run_cli(aoa, "find", "hypothesis everyone", "-m", "bm25", "--why", "notes/aoa", "--json")
    assert got.returncode == 0, got.stderr
    story = json.loads(got.stdout)
    assert story["removed_by"] == "archived" and "--history" in story["explanation"]


def test_context_and_reflect_cite_history_only_when_asked(aoa: Path) -> None:
    ctx = run_cli(aoa, "context", "single point of failure message broker", "--min-score", "0")
    assert ctx.returncode == 0, ctx.stderr
    assert "@V{" not in ctx.stdout and "[Source: notes/aoa]" in ctx.stdout
    old = run_cli(
        aoa, "context", "single point of failure message broker", "--min-score", "0", "--history"
    )
    assert "[Source: notes/aoa@V{1}]" in old.stdout
    points = run_cli(aoa, "reflect", "message broker failure", "--kind", "key-points", "--json")
    assert points.returncode == 0, points.stderr
    doc = json.loads(points.stdout)
    assert doc["points"] and all("@V{" not in p["source"] for p in doc["points"])
    assert "Hypothesis" not in doc["text"]


def test_now_notes_only_with_all(aoa: Path) -> None:
    plain = json.loads(run_cli(aoa, "find", "message broker failure", "--json").stdout)
    assert "now" not in {h["id"] for h in plain["hits"]}
    every = json.loads(run_cli(aoa, "find", "message broker failure", "--all", "--json").stdout)
    assert "now" in {h["id"] for h in every["hits"]}
    ctx = run_cli(aoa, "context", "message broker failure analysis", "--min-score", "0")
    assert "[Source: now]" not in ctx.stdout
    ctx_all = run_cli(
        aoa, "context", "message broker failure analysis", "--min-score", "0", "--all"
    )
    assert "[Source: now]" in ctx_all.stdout
    assert run_cli(aoa, "get", "now").returncode == 0


def test_flow_results_answer_about_now(aoa: Path) -> None:
    got = run_cli(aoa, "flow", "-q", "message broker failure", "--json")
    assert got.returncode == 0, got.stderr
    results = json.loads(got.stdout)["results"]
    assert results and all("@V{" not in r["matched"] and r["id"] != "now" for r in results)


def test_resolve_refuses_history(aoa: Path) -> None:
    got = run_cli(aoa, "find", "message broker", "--resolve", "--history")
    assert got.returncode == 1 and "--history" in got.stderr
