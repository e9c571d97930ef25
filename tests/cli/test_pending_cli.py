"""`keepui pending` and `keepui analyze` through real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import break_summarizer, make_fake_store
from support import run_cli as run

LONG = " ".join(
    f"Sentence {i} is about the tides, the boats and the harbour wall." for i in range(40)
)
SECTIONS = "\n\n".join(
    f"# Chapter {n}\n" + " ".join(f"word{n}x{i}" for i in range(300)) for n in range(1, 4)
)


def js(store: Path, *args: str) -> dict[str, object]:
    got = run(store, *args, "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The queue tests that take `store_dir` run on each backend."""
    return backend_dir


def test_put_queues_work_that_drain_finishes(store_dir: Path) -> None:
    assert run(store_dir, "put", LONG, "-i", "long").returncode == 0
    item = js(store_dir, "get", "long")
    assert [(w["task"], w["state"]) for w in item["pending"]] == [("summarize", "queued")]  # type: ignore[union-attr]
    assert "pending: summarize queued" in run(store_dir, "get", "long").stdout
    report = js(store_dir, "pending")
    assert report["schema"] == 1 and report["counts"] == {"summarize": {"queued": 1}}
    drained = js(store_dir, "pending", "--drain")
    assert [(r["task"], r["outcome"]) for r in drained["drained"]] == [("summarize", "done")]  # type: ignore[union-attr]
    after = js(store_dir, "get", "long")
    assert after["pending"] == [] and after["summary"] != item["summary"]
    assert "queue empty" in run(store_dir, "pending").stdout


def test_dead_letters_are_kept_retried_and_purged(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    break_summarizer(store, max_attempts=1)
    assert run(store, "put", LONG, "-i", "long").returncode == 0
    drained = js(store, "pending", "--drain")
    assert [r["outcome"] for r in drained["drained"]] == ["dead"]  # type: ignore[union-attr]
    (dead,) = drained["failures"]  # type: ignore[misc]
    assert dead["state"] == "dead" and "127.0.0.1:9" in dead["error"]
    human = run(store, "pending")
    assert "dead" in human.stdout and "error:" in human.stdout
    assert "after 1 attempt(s)" in run(store, "get", "long").stdout
    retried = js(store, "pending", "--retry")
    assert retried["retried"] == 1 and retried["counts"] == {"summarize": {"queued": 1}}
    js(store, "pending", "--drain")
    purged = js(store, "pending", "--purge")
    assert purged["purged"] == 1 and purged["counts"] == {}
    assert run(store, "pending", "--drain", "--purge").returncode == 1


def test_analyze_splits_and_skips_unchanged(store_dir: Path) -> None:
    assert run(store_dir, "put", SECTIONS, "-i", "book").returncode == 0
    first = js(store_dir, "analyze", "book")
    assert first["parts"] == 3
    again = js(store_dir, "analyze", "book")
    assert "unchanged" in str(again["result"])
    forced = js(store_dir, "analyze", "book", "--force")
    assert forced["parts"] == 3 and "3 part(s)" in str(forced["result"])
    parts = js(store_dir, "get", "book", "--parts")["parts"]
    assert [p["title"] for p in parts] == ["Chapter 1", "Chapter 2", "Chapter 3"]  # type: ignore[union-attr]
    queued = js(store_dir, "analyze", "book", "--queue")
    assert queued["queued"]
    assert run(store_dir, "analyze", "missing").returncode == 2
