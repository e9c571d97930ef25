"""run_flow with a dict-backed load_flow and a recording run_action: no storage involved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keepui_engine.client.flow_bindings import DEFAULT_PARAMS
from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.flows.loader import builtin_text, parse
from keepui_engine.flows.model import FlowDoc, FlowTick
from keepui_engine.flows.runtime import run_flow
from keepui_engine.flows.signals import summarize

DATA = Path(__file__).parent / "data"
DEFAULTS = {k: v for k, v in DEFAULT_PARAMS.items() if k != "query"}


def docs(*names: str) -> dict[str, FlowDoc]:
    out = {}
    for name in names:
        path = DATA / f"{name}.yaml"
        text = path.read_text() if path.exists() else builtin_text(name)
        out[name] = parse(text or "", name)
    return out


def loader(table: dict[str, FlowDoc]) -> Any:
    def load(name: str) -> FlowDoc:
        if name not in table:
            raise NotFound(f"no state doc {name!r}")
        return table[name]

    return load


class Recorder:
    """run_action stand-in: hands out scripted score lists per search, records every call."""

    def __init__(self, scores: dict[str, list[float]] | None = None) -> None:
        self.scores = scores or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, action: str, args: dict[str, Any]) -> Any:
        self.calls.append((action, args))
        if action == "find":
            key = f"{args.get('query')}|{','.join(args.get('tags') or [])}|{args.get('mode')}"
            scores = self.scores.get(key, self.scores.get(str(args.get("query")), [0.5, 0.49]))
            results = [
                {"id": f"{args.get('query')}-{i}", "score": s, "summary": f"doc {i}", "tags": {}}
                for i, s in enumerate(scores)
            ]
            return {
                "query": args.get("query"),
                "tags": args.get("tags") or [],
                "mode": args.get("mode"),
                "results": results,
                **summarize(results),
            }
        if action == "pick":
            from keepui_engine.flows.actions import pick

            return pick(args["candidates"])
        if action == "expand":
            from keepui_engine.flows.actions import expand

            return expand(args["query"], args.get("results"), args.get("terms"))
        raise AssertionError(action)


def test_a_clear_winner_resolves_in_one_tick() -> None:
    rec = Recorder({"auth": [0.8, 0.4, 0.3]})
    seen: list[FlowTick] = []
    result = run_flow(
        "query-resolve",
        {**DEFAULTS, "query": "auth"},
        budget=5,
        load_flow=loader(docs("query-resolve")),
        run_action=rec,
        on_tick=seen.append,
    )
    assert (result.status, result.reason, result.history) == (
        "done",
        "clear winner",
        ["query-resolve"],
    )
    assert [h["id"] for h in result.results] == ["auth-0", "auth-1", "auth-2"]
    assert seen == result.ticks and result.cursor is None
    tick = result.ticks[0]
    assert tick.outcome == "return done" and tick.searches[0].output["margin"] == 0.5
    fired = [r.rule for r in tick.rules if r.fired]
    assert fired == ["search", "#4"]  # the margin rule is the 4th


def test_ambiguous_results_branch_into_different_searches_then_stop() -> None:
    # Near-equal scores: branch. The branch searches by words and by meaning (different
    # searches, unlike keep's identical pivots); none is clear, so it stops as ambiguous with
    # the first search's results.
    rec = Recorder({"auth": [0.5, 0.5, 0.49, 0.49]})
    result = run_flow(
        "query-resolve",
        {**DEFAULTS, "query": "auth"},
        budget=5,
        load_flow=loader(docs("query-resolve", "query-branch", "query-explore")),
        run_action=rec,
    )
    assert result.history == ["query-resolve", "query-branch"]
    assert result.status == "stopped" and result.reason.startswith("ambiguous")
    modes = [a.get("mode") for name, a in rec.calls if name == "find"]
    assert modes == [None, "bm25", "dense"]
    assert [h["id"] for h in result.results][:2] == ["auth-0", "auth-1"]
    assert len(result.tried) == 3


def test_a_clear_branch_wins() -> None:
    rec = Recorder({"auth": [0.5, 0.5, 0.49], "auth||bm25": [0.9, 0.2]})
    result = run_flow(
        "query-resolve",
        {**DEFAULTS, "query": "auth"},
        budget=5,
        load_flow=loader(docs("query-resolve", "query-branch")),
        run_action=rec,
    )
    assert result.status == "done" and result.reason == "clear winner by words (bm25)"


def test_budget_stops_with_a_cursor_that_resumes() -> None:
    table = docs("counter")
    load = loader(table)
    first = run_flow(
        "counter", {"n": 0, "target": 5}, budget=2, load_flow=load, run_action=Recorder()
    )
    assert (first.status, first.reason, len(first.ticks)) == ("stopped", "budget", 2)
    assert first.cursor
    resumed = run_flow(
        "counter", {}, budget=10, load_flow=load, run_action=Recorder(), cursor=first.cursor
    )
    assert resumed.status == "done" and resumed.data["n"] == 5
    assert [t.tick for t in resumed.ticks] == [3, 4, 5, 6]  # the count goes on
    assert resumed.history[:2] == ["counter", "counter"]


def test_a_state_that_would_repeat_itself_stops_instead_of_spending_the_budget() -> None:
    rec = Recorder()
    result = run_flow(
        "loop", {"query": "q"}, budget=50, load_flow=loader(docs("loop")), run_action=rec
    )
    assert result.status == "stopped" and result.reason.startswith("no progress")
    assert len(result.ticks) == 1 and len(rec.calls) == 1


def test_match_all_fires_every_rule_that_holds_then_post() -> None:
    load = loader(docs("fanout"))
    rec = Recorder()
    both = run_flow("fanout", {"also_b": True}, budget=1, load_flow=load, run_action=rec)
    assert both.reason == "both" and [a["query"] for _, a in rec.calls] == ["alpha", "beta"]
    only = run_flow("fanout", {}, budget=1, load_flow=load, run_action=Recorder())
    assert (only.status, only.reason) == ("stopped", "only a")
    assert [r.fired for r in only.ticks[0].rules[:3]] == [True, False, False]


def test_gate_pauses_before_each_tick_and_can_cancel() -> None:
    asked: list[tuple[int, str]] = []

    def gate(tick: int, state: str, params: dict[str, Any]) -> bool:
        asked.append((tick, state))
        return tick < 3

    result = run_flow(
        "counter",
        {"n": 0, "target": 9},
        budget=10,
        load_flow=loader(docs("counter")),
        run_action=Recorder(),
        gate=gate,
    )
    assert asked == [(1, "counter"), (2, "counter"), (3, "counter")]
    assert (result.status, result.reason, len(result.ticks)) == ("stopped", "cancelled", 2)
    assert result.cursor


def test_errors_end_the_flow_with_status_error() -> None:
    missing = run_flow(
        "query-resolve",
        {**DEFAULTS},
        budget=3,
        load_flow=loader(docs("query-resolve")),
        run_action=Recorder(),
    )
    assert missing.status == "error" and "query required" in missing.reason
    unknown = run_flow(
        parse("rules: [{then: nowhere}]", "start"),
        {},
        budget=3,
        load_flow=loader({}),
        run_action=Recorder(),
    )
    assert unknown.status == "error" and "nowhere" in unknown.reason
    assert unknown.data["error_type"] == "NotFound"


def test_bad_budget_and_cursor_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        run_flow("counter", {}, budget=0, load_flow=loader({}), run_action=Recorder())
    with pytest.raises(UsageError, match="cursor"):
        run_flow(
            "counter",
            {},
            budget=1,
            load_flow=loader({}),
            run_action=Recorder(),
            cursor="not-a-cursor",
        )
