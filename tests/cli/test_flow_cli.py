"""`keepui flow` through real subprocesses: JSON, NDJSON ticks, text, cursors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli as run

from keepui_engine import open_workbench


@pytest.fixture
def store(backend_dir: Path) -> Path:
    """Four notes, on each backend (`backend_dir`)."""
    store_dir = backend_dir
    with open_workbench(store_dir, own=True) as wb:
        wb.put("OAuth2 tokens for the API gateway", tags=["topic=auth"])
        wb.put("API keys rotate monthly for internal services", tags=["topic=auth"])
        wb.put("Sourdough bread with a long fermentation", tags=["topic=food"])
        wb.put("Marathon plan: the long run on Sundays", tags=["topic=sport"])
    return store_dir


def test_json_is_one_document_with_every_tick(store: Path) -> None:
    done = run(store, "flow", "query-resolve", "-q", "OAuth2 gateway", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == 1 and doc["flow"] == "query-resolve"
    assert doc["status"] in ("done", "stopped") and doc["reason"]
    assert len(doc["ticks"]) == len(doc["history"]) >= 1
    tick = doc["ticks"][0]
    assert {"tick", "state", "params", "rules", "actions", "outcome", "elapsed_ms"} <= set(tick)
    search = tick["actions"][0]["output"]
    assert {"margin", "entropy", "lineage_strong", "count", "results"} <= set(search)
    assert doc["results"] and {"id", "score", "summary"} <= set(doc["results"][0])


def test_nl_streams_a_line_per_tick_then_the_result(store: Path) -> None:
    done = run(store, "flow", "-q", "long", "--nl", "-p", "margin_high=2", "--budget", "3")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["type"] for r in records] == ["tick"] * (len(records) - 1) + ["result"]
    assert records[-1]["history"] == [r["state"] for r in records[:-1]]
    assert "ticks" not in records[-1]


def test_text_shows_ticks_signals_and_the_outcome(store: Path) -> None:
    done = run(store, "flow", "-q", "bread", "-t", "topic=food")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tick 1  query-resolve")
    assert "margin" in done.stdout and "entropy" in done.stdout
    assert "[topic=food]" in done.stdout


def test_budget_stop_gives_a_cursor_that_resumes(store: Path) -> None:
    first = json.loads(
        run(store, "flow", "-q", "long", "-p", "margin_high=2", "--budget", "1", "--json").stdout
    )
    assert (first["status"], first["reason"]) == ("stopped", "budget") and first["cursor"]
    resumed = run(store, "flow", "--cursor", first["cursor"], "--budget", "5", "--json")
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["ticks"][0]["tick"] == 2 and doc["history"][0] == "query-resolve"
    bad = run(store, "flow", "--cursor", "garbage!!", "--json")
    assert bad.returncode == 1 and "cursor" in bad.stderr
    assert json.loads(bad.stdout)["error"]["kind"] == "usage"


def test_a_state_doc_from_stdin_and_the_listing(store: Path) -> None:
    yaml = (
        "# mine\nrules:\n  - {id: s, do: find, with: {query: '{params.query}'}}\n"
        "  - return: {status: done, with: {reason: mine, results: '{s.results}'}}\n"
    )
    done = run(store, "flow", "mine", "-f", "-", "-q", "bread", "--json", stdin=yaml)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reason"] == "mine"
    listed = json.loads(run(store, "flow", "--list", "--json").stdout)
    assert {"query-resolve", "find-deep"} <= {f["name"] for f in listed["flows"]}


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["flow"], 1, "query required"),
        (["flow", "nope", "-q", "x"], 2, "no state doc 'nope'"),
        (["flow", "-q", "x", "-p", "oops"], 1, "KEY=VALUE"),
        (["flow", "-q", "x", "--budget", "0"], 1, "--budget 0"),
        (["flow", "-q", "x", "-p", "margin_high=abc"], 1, "give a number"),
        (["flow", "-q", "x", "-p", "limit=0"], 1, "whole number"),
        (["flow", "x", "-f", "/no/such/file.yaml"], 1, "--file"),
        (["flow", "x", "-f", "-", "-q", "y"], 1, "not valid YAML"),
    ],
)
def test_errors_and_exit_codes(store: Path, args: list[str], code: int, needle: str) -> None:
    done = run(store, *args, stdin="rules: [")
    assert done.returncode == code, (done.stdout, done.stderr)
    assert needle in done.stderr and "Traceback" not in done.stderr
