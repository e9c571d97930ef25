"""run_flow: step through state docs tick by tick, with storage given as callables."""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keepui_engine.core.errors import FlowError, KeepuiError, UsageError
from keepui_engine.flows.expressions import render, test
from keepui_engine.flows.model import ActionCall, FlowDoc, FlowResult, FlowTick, Rule, RuleTrace

LoadFlow = Callable[[str], FlowDoc]
RunAction = Callable[[str, dict[str, Any]], Any]
OnTick = Callable[[FlowTick], None]
Gate = Callable[[int, str, dict[str, Any]], bool]


@dataclass
class _Run:
    """The mutable state of one run (what a cursor saves)."""

    flow: str
    state: str
    params: dict[str, Any]
    tick: int = 0
    tried: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    last_results: list[dict[str, Any]] = field(default_factory=list)


def run_flow(
    start: str | FlowDoc,
    params: dict[str, Any] | None = None,
    *,
    budget: int,
    load_flow: LoadFlow,
    run_action: RunAction,
    on_tick: OnTick | None = None,
    gate: Gate | None = None,
    cursor: str | None = None,
) -> FlowResult:
    """Run a state doc until it returns, stops, or spends its tick budget.

    Args:
        start: The state doc (or its name) to begin with; ignored when resuming a cursor.
        params: Params for the flow; on resume they override the saved ones.
        budget: The most ticks this run may take (each evaluation of a state doc is one).
        load_flow: Name -> FlowDoc, for `then:` transitions (and `start` given by name).
        run_action: (action, args) -> output; the only way a flow touches the store.
        on_tick: Called after each tick (from the calling thread).
        gate: Called before each tick with (tick, state, params); returning False stops the
            flow (`stopped`, reason `cancelled`) with a cursor to resume it. Step mode blocks
            here until the user says next.
        cursor: A token from a stopped run: resume where it stopped, with a fresh budget.

    Returns:
        The FlowResult: status done / error / stopped, its reason, every tick and the results.
    """
    if budget < 1:
        raise UsageError(f"--budget {budget}: give 1 or more ticks.")
    t_start = time.perf_counter()
    docs: dict[str, FlowDoc] = {}
    if isinstance(start, FlowDoc):
        docs[start.name] = start
    run = _decode(cursor, params or {}) if cursor else None
    if run is None:
        name = start.name if isinstance(start, FlowDoc) else start
        run = _Run(name, name, dict(params or {}))
    ticks: list[FlowTick] = []

    def finish(status: str, reason: str, data: dict[str, Any], resumable: bool) -> FlowResult:
        results = data.get("results")
        return FlowResult(
            flow=run.flow,
            status=status,
            reason=reason,
            state=run.state,
            data=_slim_data(data),
            results=results if isinstance(results, list) else run.last_results,
            ticks=ticks,
            history=list(run.history),
            tried=list(run.tried),
            cursor=_encode(run) if resumable else None,
            budget=budget,
            elapsed_ms=round((time.perf_counter() - t_start) * 1000, 2),
        )

    last_data: dict[str, Any] = {}
    while True:
        if len(ticks) >= budget:
            return finish("stopped", "budget", {**last_data, "reason": "budget"}, True)
        key = f"{run.state} {_canonical(run.params)}"
        if key in run.visited:
            reason = (
                f"no progress: {run.state} would run again with the same params, "
                "so the results cannot change"
            )
            return finish("stopped", reason, {**last_data, "reason": reason}, False)
        if gate is not None and not gate(run.tick + 1, run.state, _slim(run.params)):
            return finish("stopped", "cancelled", {**last_data, "reason": "cancelled"}, True)
        try:
            doc = docs.get(run.state) or load_flow(run.state)
        except KeepuiError as exc:
            data = {"reason": exc.message, "error_type": type(exc).__name__}
            return finish("error", exc.message, data, False)
        docs[doc.name] = doc
        run.visited.append(key)
        run.tick += 1
        run.history.append(run.state)
        t0 = time.perf_counter()
        step = _Tick(run, doc, {"total": budget, "remaining": budget - len(ticks) - 1}, run_action)
        try:
            step.evaluate()
        except KeepuiError as exc:
            ticks.append(step.trace(f"error: {exc.message}", t0))
            if on_tick is not None:
                on_tick(ticks[-1])
            return finish(
                "error",
                exc.message,
                {"reason": exc.message, "error_type": type(exc).__name__},
                False,
            )
        tick = step.trace(step.outcome, t0)
        ticks.append(tick)
        if on_tick is not None:
            on_tick(tick)
        last_data = {k: v for k, v in step.bindings.items() if isinstance(v, dict)}
        if step.returned is not None:
            status, data = step.returned
            return finish(status, str(data.get("reason") or status), data, False)
        if step.next_state is None:
            return finish("done", "no rule moved on", dict(step.bindings), False)
        run.params = {**run.params, **step.next_params}
        run.state = step.next_state


class _Tick:
    """One evaluation of one state doc."""

    def __init__(
        self, run: _Run, doc: FlowDoc, budget: dict[str, int], run_action: RunAction
    ) -> None:
        self.run, self.doc, self.run_action = run, doc, run_action
        self.budget = budget
        self.bindings: dict[str, Any] = {}
        self.rules: list[RuleTrace] = []
        self.actions: list[ActionCall] = []
        self.outcome = "end"
        self.returned: tuple[str, dict[str, Any]] | None = None
        self.next_state: str | None = None
        self.next_params: dict[str, Any] = {}

    def context(self) -> dict[str, Any]:
        return {
            **self.bindings,
            "params": self.run.params,
            "budget": self.budget,
            "flow": {"tick": self.run.tick, "state": self.run.state},
        }

    def evaluate(self) -> None:
        if self.doc.match == "sequence":
            self._sequence(self.doc.rules, 0)
            return
        for i, rule in enumerate(self.doc.rules):
            if self._holds(rule, i):
                if rule.then or rule.returns:
                    raise FlowError(
                        f"state doc {self.doc.name!r}: in a `match: all` block rules only run "
                        "actions; put then/return in `post:`."
                    )
                self._act(rule, i)
        self._sequence(self.doc.post, len(self.doc.rules))

    def _sequence(self, rules: tuple[Rule, ...], base: int) -> None:
        for i, rule in enumerate(rules, start=base):
            if not self._holds(rule, i):
                continue
            if rule.do:
                self._act(rule, i)
            if rule.returns:
                ctx = self.context()
                data = (
                    render(rule.return_with, ctx)
                    if rule.return_with is not None
                    else dict(self.bindings)
                )
                self.returned = (rule.returns, data)
                self.outcome = f"return {rule.returns}"
                self._set_outcome(self.outcome)
                return
            if rule.then:
                self.next_state = rule.then
                self.next_params = render(rule.then_with, self.context())
                self.outcome = f"then {rule.then}"
                self._set_outcome(self.outcome)
                return

    def _holds(self, rule: Rule, index: int) -> bool:
        fired = rule.when is None or test(rule.when, self.context())
        self.rules.append(
            RuleTrace(rule.label(index), rule.when, fired, rule.do if fired else None)
        )
        return fired

    def _set_outcome(self, outcome: str) -> None:
        last = self.rules[-1]
        self.rules[-1] = RuleTrace(last.rule, last.when, last.fired, last.action, outcome)

    def _act(self, rule: Rule, index: int) -> None:
        assert rule.do is not None
        args = render(rule.args, self.context())
        t0 = time.perf_counter()
        output = self.run_action(rule.do, args)
        ms = round((time.perf_counter() - t0) * 1000, 2)
        self.bindings[rule.label(index)] = output
        self.actions.append(ActionCall(rule.label(index), rule.do, _slim(args), output, ms))
        if isinstance(output, dict) and isinstance(output.get("results"), list):
            self.run.last_results = output["results"]
            tried = _describe_search(args)
            if tried and tried not in self.run.tried:
                self.run.tried.append(tried)

    def trace(self, outcome: str, t0: float) -> FlowTick:
        return FlowTick(
            tick=self.run.tick,
            state=self.doc.name,
            params=_slim(self.run.params),
            rules=self.rules,
            actions=self.actions,
            outcome=outcome,
            elapsed_ms=round((time.perf_counter() - t0) * 1000, 2),
        )


def _describe_search(args: dict[str, Any]) -> str:
    if not (args.get("query") or args.get("similar_to")):
        return ""
    parts = [str(args.get("query") or args.get("similar_to"))]
    tags = args.get("tags")
    if tags:
        parts.append("[" + ", ".join(map(str, tags)) + "]")
    if args.get("mode"):
        parts.append(str(args["mode"]))
    return " ".join(parts)


def _is_bulky(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def _slim(params: dict[str, Any]) -> dict[str, Any]:
    """Params for display: result lists become their size."""
    return {k: (f"[{len(v)} results]" if _is_bulky(v) else v) for k, v in params.items()}


def _slim_data(data: dict[str, Any]) -> dict[str, Any]:
    """Return data without the bulky copies of results that live in FlowResult.results."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k == "results":
            continue
        if isinstance(v, dict) and "results" in v:
            v = {kk: vv for kk, vv in v.items() if kk != "results"}
        out[k] = v
    return out


def _canonical(params: dict[str, Any]) -> str:
    return json.dumps(
        {k: v for k, v in params.items() if not _is_bulky(v)}, sort_keys=True, default=str
    )


_KEEP = ("id", "score", "summary", "tags")


def _encode(run: _Run) -> str:
    params = {
        k: ([{f: r.get(f) for f in _KEEP} for r in v] if _is_bulky(v) else v)
        for k, v in run.params.items()
    }
    body = {
        "v": 1,
        "flow": run.flow,
        "state": run.state,
        "params": params,
        "tick": run.tick,
        "tried": run.tried,
        "visited": run.visited,
        "history": run.history,
    }
    raw = json.dumps(body, separators=(",", ":"), default=str).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(token: str, params: dict[str, Any]) -> _Run:
    try:
        padded = token + "=" * (-len(token) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if body.get("v") != 1:
            raise ValueError("unknown cursor version")
        return _Run(
            flow=body["flow"],
            state=body["state"],
            params={**body["params"], **params},
            tick=int(body["tick"]),
            tried=list(body["tried"]),
            visited=list(body["visited"]),
            history=list(body["history"]),
        )
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise UsageError(
            f"--cursor {token[:24]}…: not a cursor from a stopped flow ({exc}); copy the "
            "`cursor` field of the stopped run exactly."
        ) from exc
