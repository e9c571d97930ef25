"""query-resolve with the real model: clear questions end in one tick, split ones branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import PutSpec, Workbench, open_workbench

pytestmark = pytest.mark.model

NOTES = {
    "db-choice": (
        "We decided to store everything in DuckDB because one file is easy to back up.",
        ["kind=decision"],
    ),
    "vectors": (
        "Vector search uses usearch HNSW once the store grows past thirty thousand items.",
        ["kind=note"],
    ),
    "marathon": (
        "Training plan: long run on Sunday, intervals on Tuesday, rest on Friday.",
        ["kind=note"],
    ),
    "login-web": (
        "Login bug on the web app: sessions expire after five minutes.",
        ["project=web", "kind=bug"],
    ),
    "login-mobile": (
        "Login bug on the mobile app: the session token is lost after an update.",
        ["project=mobile", "kind=bug"],
    ),
    "login-web-2": (
        "Web login: the password reset link expires too early.",
        ["project=web", "kind=bug"],
    ),
    "login-mobile-2": (
        "Mobile login fails offline because the token refresh needs the network.",
        ["project=mobile", "kind=bug"],
    ),
}


@pytest.fixture(scope="module")
def wb(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    store: Path = tmp_path_factory.mktemp("flows") / "store"
    bench = open_workbench(store, own=True)
    bench.put_many([PutSpec(t, id=i, tags=tags) for i, (t, tags) in NOTES.items()])
    yield bench  # type: ignore[misc]
    bench.close()


def test_a_clear_question_resolves_in_one_tick(wb: Workbench) -> None:
    result = wb.run_flow("query-resolve", {"query": "which database did we choose"})
    assert (result.status, result.reason, result.history) == (
        "done",
        "clear winner",
        ["query-resolve"],
    )
    assert result.results[0]["id"] == "db-choice"
    assert result.ticks[0].searches[0].output["margin"] > 0.15


def test_a_question_the_tags_split_branches_by_those_facets(wb: Workbench) -> None:
    result = wb.run_flow("query-resolve", {"query": "login bug"})
    assert result.history == ["query-resolve", "query-branch"]
    assert result.status == "stopped" and "project=web" in result.reason
    assert "project=mobile" in result.reason
    branch = result.ticks[1]
    pivots = {tuple(a.output["tags"]) for a in branch.searches if a.rule.startswith("pivot")}
    assert ("project=web",) in pivots and ("project=mobile",) in pivots
    web = next(a.output for a in branch.searches if a.output["tags"] == ["project=web"])
    assert {h["id"] for h in web["results"]} == {"login-web", "login-web-2"}
    # The answer is the first search's ranking, all four login notes on top.
    assert {h["id"] for h in result.results[:4]} == {
        "login-web",
        "login-web-2",
        "login-mobile",
        "login-mobile-2",
    }
