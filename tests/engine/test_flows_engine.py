"""Flows over a real store (fake embedder): stored state docs, config thresholds, client mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import FlowError, NotFound, Workbench, open_workbench

NOTES = [
    ("OAuth2 tokens for the API gateway", "topic=auth"),
    ("API keys rotate monthly for internal services", "topic=auth"),
    ("Sourdough bread with a long fermentation", "topic=food"),
    ("Marathon plan: the long run on Sundays", "topic=sport"),
]

CUSTOM = """\
# Look the query up twice: once as asked and once by words alone.
match: all
rules:
  - {id: asked, do: find, with: {query: "{params.query}", limit: 3}}
  - {id: words, do: find, with: {query: "{params.query}", mode: bm25, limit: 3}}
post:
  - return: {status: done, with: {reason: "looked twice", results: "{words.results}"}}
"""


@pytest.fixture
def seeded(wb: Workbench) -> Workbench:
    for text, tag in NOTES:
        wb.put(text, tags=[tag])
    return wb


def test_query_resolve_runs_over_the_store(seeded: Workbench) -> None:
    ticks = []
    result = seeded.run_flow(
        "query-resolve", {"query": "OAuth2 tokens gateway"}, on_tick=ticks.append
    )
    assert result.status in ("done", "stopped") and result.ticks == ticks
    search = result.ticks[0].searches[0].output
    # The flow's search is the store's find: the same hits (notes with no evidence hidden).
    shown = seeded.find("OAuth2 tokens gateway")
    assert search["count"] == len(shown.hits) >= 3
    assert {"margin", "entropy", "lineage_strong"} <= set(search)
    assert result.results and result.results[0]["summary"]


def test_a_stored_state_doc_runs_and_is_listed(seeded: Workbench) -> None:
    seeded.put(CUSTOM, id=".state/twice")
    infos = {f.name: f for f in seeded.flows()}
    assert infos["twice"].origin == "store" and infos["twice"].description.startswith("Look")
    assert infos["query-resolve"].origin == "builtin"
    result = seeded.run_flow("twice", {"query": "bread"})
    assert (result.status, result.reason) == ("done", "looked twice")
    assert [a.rule for a in result.ticks[0].actions] == ["asked", "words"]
    assert result.results[0]["summary"].startswith("Sourdough")


def test_a_doc_given_as_text_and_bad_docs(seeded: Workbench) -> None:
    assert seeded.run_flow("adhoc", {"query": "bread"}, doc=CUSTOM).reason == "looked twice"
    with pytest.raises(FlowError, match="unknown key"):
        seeded.run_flow("adhoc", {"query": "x"}, doc="rules: [{do: find, bogus: 1}]")
    with pytest.raises(NotFound, match="query-resolve"):
        seeded.run_flow("no-such-flow", {"query": "x"})
    bad_action = seeded.run_flow("adhoc", {}, doc="rules: [{do: teleport}]")
    assert bad_action.status == "error" and "teleport" in bad_action.reason
    bad_arg = seeded.run_flow("adhoc", {}, doc="rules: [{do: find, with: {query: q, limit: x}}]")
    assert bad_arg.status == "error" and "find: bad arguments" in bad_arg.reason


def test_thresholds_and_budget_come_from_keepui_toml(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    toml = store / "keepui.toml"
    toml.write_text(toml.read_text().replace("budget = 5", "budget = 1\nmargin_high = 2.0"))
    with open_workbench(store, own=True) as wb:
        for text, tag in NOTES:
            wb.put(text, tags=[tag])
        result = wb.run_flow("query-resolve", {"query": "OAuth2 tokens gateway"})
        assert result.budget == 1 and len(result.ticks) == 1
        assert result.reason != "clear winner"  # a margin cannot exceed 2.0
        assert result.ticks[0].params["margin_high"] == 2.0
        again = wb.run_flow("query-resolve", {"query": "OAuth2", "margin_high": 0.0})
        assert again.reason == "clear winner"  # params beat the config


def test_a_client_holds_the_store_for_the_whole_flow_then_lets_go(seeded: Workbench) -> None:
    store = seeded.store
    seeded.close()
    client = open_workbench(store)
    result = client.run_flow("query-resolve", {"query": "long run"}, budget=3)
    assert result.results and not client.owns_store
    with open_workbench(store, own=True) as again:  # the lock was released
        assert again.stats().items == 4
