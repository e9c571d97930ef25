"""The one adapter between the storage-free flow runtime and the Workbench: docs and actions."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import FlowError, KeepuiError, NotFound, UsageError
from keepui_engine.core.types import FindQuery
from keepui_engine.flows import actions, loader, signals
from keepui_engine.flows.actions import ACTION_ARGS, check_actions
from keepui_engine.flows.model import FlowDoc, FlowInfo, FlowResult, FlowTick

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench

STATE_PREFIX = ".state/"

# Thresholds and sizes the built-in state docs read; keepui.toml [flows] and -p override them.
DEFAULT_PARAMS: dict[str, Any] = {
    "query": None,
    "tags": [],
    "mode": None,
    "limit": 10,
    "margin_high": 0.15,
    "margin_low": 0.03,
    "entropy_high": 0.8,
    "entropy_low": 0.3,
    "lineage_strong": 0.5,
    "temperature": signals.TEMPERATURE,
    "pivot_limit": 10,
    "bridge_limit": 10,
    "explore_limit": 20,
    "expand_terms": 3,
    "deep_limit": 3,
    "id": None,
}


def coerce_params(raw: list[str] | None) -> dict[str, Any]:
    """Parse repeated `-p KEY=VALUE`: numbers, true/false and JSON lists keep their type.

    `tags` takes `k=v` tags separated by commas (`-p tags=topic=auth,status=open`).
    """
    out: dict[str, Any] = {}
    for item in raw or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"-p {item!r}: give a param as KEY=VALUE, e.g. -p margin_high=0.2.")
        if key == "tags":
            out[key] = [t.strip() for t in value.split(",") if t.strip()]
            continue
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def check_params(params: dict[str, Any]) -> dict[str, Any]:
    """Check the types of the params the shipped docs read (raises UsageError naming one)."""
    for key, default in DEFAULT_PARAMS.items():
        value = params.get(key)
        if value is None or default is None:
            continue
        if isinstance(default, (int, float)) and (
            isinstance(value, bool) or not isinstance(value, (int, float))
        ):
            raise UsageError(f"-p {key}={value!r}: give a number, e.g. -p {key}={default}.")
        if (
            isinstance(default, int)
            and key.endswith(("limit", "terms"))
            and (not isinstance(value, int) or value < 1)
        ):
            raise UsageError(f"-p {key}={value!r}: give a whole number, 1 or more.")
        if isinstance(default, list) and not isinstance(value, list):
            raise UsageError(f"-p {key}={value!r}: give k=v tags separated by commas.")
    return params


WRITE_ACTIONS = ("summarize", "tag", "put", "analyze")
_PARAM_REF = re.compile(r"\bparams\.([A-Za-z_][A-Za-z0-9_]*)")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def known_params(start: FlowDoc, load: Callable[[str], FlowDoc]) -> set[str]:
    """The params a run can use: the shipped ones and every `params.X` the reachable docs read."""
    known = set(DEFAULT_PARAMS)
    todo, seen = [start], {start.name}
    while todo:
        doc = todo.pop()
        for rule in (*doc.rules, *doc.post):
            texts = _strings([rule.when, rule.args, rule.then_with, rule.return_with])
            known.update(m for t in texts for m in _PARAM_REF.findall(t))
            known.update(rule.then_with)
            if rule.then and rule.then not in seen:
                seen.add(rule.then)
                try:
                    todo.append(load(rule.then))
                except KeepuiError:
                    continue  # reported when the run gets there
    return known


def check_param_names(params: dict[str, Any], known: set[str], flow: str) -> None:
    """Raise UsageError naming the known params when `params` holds one no doc reads."""
    unknown = sorted(k for k in params if k not in known)
    if unknown:
        raise UsageError(
            f"-p {unknown[0]}: flow {flow!r} has no param {unknown[0]!r}; the params are "
            f"{', '.join(sorted(known))}."
        )


class FlowHost:
    """Loads state docs (the store's `.state/NAME` first, then the shipped ones) and runs
    actions through a Workbench, so flows work the same in the TUI, the CLI and a client.

    Args:
        wb: The Workbench every action goes through.
    """

    def __init__(self, wb: Workbench, *, install: bool = True) -> None:
        self.wb = wb
        self.install = install
        self.warnings: list[str] = []
        self.mutations: list[tuple[str, dict[str, Any]]] = []
        self.applied: list[dict[str, Any]] = []
        self.tick = 0
        self._docs: dict[str, FlowDoc] = {}  # one run reads each doc once

    def record(self, action: str, args: dict[str, Any]) -> dict[str, Any]:
        """A write action: checked now, applied after the tick (rules later in the same tick
        see the store as it was)."""
        if action == "put" and not str(args.get("text") or "").strip():
            raise FlowError("put needs a text: `with: {text: ...}`.")
        if action != "put" and not args.get("id"):
            raise FlowError(f"{action} needs an id: `with: {{id: ...}}`.")
        self.mutations.append((action, dict(args)))
        return {"action": action, "args": dict(args), "applied": "after this tick"}

    def apply(self) -> None:
        """Apply the write actions recorded during the tick that just ended."""
        self.tick += 1
        todo, self.mutations = self.mutations, []
        for action, args in todo:
            entry: dict[str, Any] = {"tick": self.tick, "action": action, "args": args}
            try:
                entry["result"] = self._write(action, args)
            except KeepuiError as exc:
                entry["error"] = exc.message
            self.applied.append(entry)

    def _write(self, action: str, args: dict[str, Any]) -> Any:
        wb = self.wb
        if action == "summarize":
            return wb.summarize(str(args["id"]))
        if action == "tag":
            return wb.tag(
                str(args["id"]),
                tags=_tag_list(args.get("tags")),
                remove=[str(k) for k in args.get("remove") or []],
            ).to_dict()
        if action == "put":
            doc = None if args.get("id") in (None, "") else str(args["id"])
            return wb.put(str(args["text"]), id=doc, tags=_tag_list(args.get("tags"))).to_dict()
        return wb.analyze(str(args["id"]), force=bool(args.get("force")))

    def load_flow(self, name: str) -> FlowDoc:
        """The state doc called `name`: the store's `.state/NAME`, else the shipped one, which
        is then installed as `.state/NAME` (first use). A stored doc that does not parse is
        reported in `warnings` and the shipped default runs instead. Raises NotFound naming
        the ones there are. Read once per run."""
        if name not in self._docs:
            self._docs[name] = self._load_flow(name)
        return self._docs[name]

    def _load_flow(self, name: str) -> FlowDoc:
        doc = loader.builtin_doc(name)
        try:
            text = self.wb.get(STATE_PREFIX + name).text or ""
        except NotFound:
            text = None
        if text is not None:
            try:
                return _checked(text, name)
            except FlowError as exc:
                if doc is None:
                    raise
                warning = (
                    f"{STATE_PREFIX}{name} is broken ({exc.message}); ran the shipped "
                    f"{name} instead (fix it with keepui put FILE --id {STATE_PREFIX}{name}, "
                    "or keepui config --reset-system-docs)"
                )
                if warning not in self.warnings:
                    self.warnings.append(warning)
                return doc
        elif doc is not None and self.install:
            self.install_doc(name)
        if doc is None:
            known = ", ".join(info.name for info in self.flows())
            raise NotFound(
                f"no state doc {name!r}: run one of {known}, put your own as "
                f"{STATE_PREFIX}{name}, or give a YAML file with --file."
            )
        return doc

    def install_doc(self, name: str) -> str:
        """Store the shipped state doc `name` as `.state/NAME` (a new version when it differs);
        return the put's action."""
        text = loader.builtin_text(name)
        assert text is not None
        return self.wb.put(text, id=STATE_PREFIX + name, source="system").action

    def flows(self) -> list[FlowInfo]:
        """Every state doc that can be run: shipped ones, and the store's (which win)."""
        out = {
            name: FlowInfo(name, "builtin", doc.description)
            for name in loader.builtin_names()
            if (doc := loader.builtin_doc(name)) is not None
        }
        for item in self.wb.list_items(STATE_PREFIX, limit=1000):
            name = item.id[len(STATE_PREFIX) :]
            text = item.text if item.text is not None else self.wb.get(item.id).text
            if text == loader.builtin_text(name):
                continue  # the shipped doc, installed unchanged
            try:
                desc = loader.parse(text or "", name).description
            except FlowError as exc:
                desc = f"(invalid: {exc.message})"
            out[name] = FlowInfo(name, "store", desc)
        return sorted(out.values(), key=lambda f: f.name)

    def run_action(self, action: str, args: dict[str, Any]) -> Any:
        """Run one action of a rule (raises FlowError for unknown actions or bad arguments)."""
        handler = _ACTIONS.get(action)
        if handler is None:
            raise FlowError(
                f"unknown action {action!r}: flows can run {', '.join(sorted(_ACTIONS))}."
            )
        unknown = sorted(set(args) - set(ACTION_ARGS[action]))
        if unknown:
            raise FlowError(
                f"{action} has no argument {', '.join(map(repr, unknown))}; "
                f"it reads {', '.join(ACTION_ARGS[action])}."
            )
        try:
            return handler(self, args)
        except (TypeError, ValueError) as exc:  # an argument of the wrong type in `with:`
            raise FlowError(f"{action}: bad arguments {args!r}: {exc}.") from exc

    def find(self, args: dict[str, Any]) -> dict[str, Any]:
        """find: ranked hits plus their signals (margin, entropy, lineage, facets)."""
        query = args.get("query")
        if not query:
            raise FlowError("find needs a query: `with: {query: ...}`.")
        tags = _tag_list(args.get("tags"))
        limit = int(args.get("limit") or 10)
        q = FindQuery(
            str(query),
            tags,
            limit,
            args.get("since"),
            args.get("until"),
            args.get("mode"),
            args.get("min_score"),
        )
        found = self.wb.find_query(q)
        results = [h.to_dict() for h in found.hits]
        temperature = float(args.get("temperature") or signals.TEMPERATURE)
        return {
            "query": q.query,
            "tags": tags,
            "mode": found.mode,
            "limit": limit,
            "results": results,
            **signals.summarize(results, temperature),
        }

    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        """get: one document as a dict."""
        if not args.get("id"):
            raise FlowError("get needs an id: `with: {id: ...}`.")
        return self.wb.get(str(args["id"])).to_dict()

    def related(self, args: dict[str, Any]) -> dict[str, Any]:
        """related: for each result, its edge neighbours and its nearest documents by vector
        ({"id", "via", "score", "summary"}), none repeating a result or an earlier one."""
        limit = int(args.get("limit") or 3)
        results = list(args.get("results") or [])
        seen = [str(h["id"]) for h in results]
        groups: dict[str, list[dict[str, Any]]] = {}
        for hit in results:
            found = self.wb.related(str(hit["id"]), seen=seen, per_hit=limit)
            groups[str(hit["id"])] = found
            seen += [r["id"] for r in found]
        return {"groups": groups}


def _tag_list(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw] if raw else []
    if isinstance(raw, dict):
        return [f"{k}={v}" for k, v in raw.items()]
    if isinstance(raw, list):
        return [str(t) for t in raw if t]
    raise FlowError(f"tags must be a list of k=v strings, not {raw!r}.")


_ACTIONS: dict[str, Any] = {
    "find": FlowHost.find,
    **{
        name: (lambda action: lambda host, args: host.record(action, args))(name)
        for name in WRITE_ACTIONS
    },
    "get_context": lambda host, args: host.wb.get_context(
        str(args.get("id") or ""), similar=int(args.get("limit") or 5)
    ),
    "get": FlowHost.get,
    "related": FlowHost.related,
    "pick": lambda host, args: actions.pick(args.get("candidates") or []),
    "expand": lambda host, args: actions.expand(
        str(args.get("query") or ""), args.get("results"), args.get("terms")
    ),
}


@functools.lru_cache(maxsize=64)
def _checked(text: str, name: str) -> FlowDoc:
    """A stored state doc's text, parsed and checked once per process (docs are immutable
    values: an edit is a new text). ruamel.yaml's round-trip parse is ~25 ms a doc, which every
    flow paid for each doc it loaded."""
    return check_actions(loader.check_text(text, name))


def run(
    wb: Workbench,
    name: str,
    params: dict[str, Any] | None,
    budget: int | None,
    doc: str | None,
    cursor: str | None,
    on_tick: Callable[[FlowTick], None] | None,
    gate: Callable[[int, str, dict[str, Any]], bool] | None,
) -> FlowResult:
    """Run a state doc tick by tick over the store (see `Workbench.run_flow`)."""
    from keepui_engine.client.session import _unexpected
    from keepui_engine.flows.runtime import run_flow

    host = FlowHost(wb)
    given = dict(params or {})
    if cursor is None:
        params = {**DEFAULT_PARAMS, **wb.settings.flow_params, **given}
    check_params(params or {})
    with wb.session():
        start = check_actions(loader.parse(doc, name)) if doc is not None else host.load_flow(name)
        if cursor is None:
            check_param_names(given, known_params(start, host.load_flow), name)

        def ticked(tick: FlowTick) -> None:
            host.apply()  # write actions take effect after the tick that asked for them
            if on_tick is not None:
                on_tick(tick)

        try:
            result = run_flow(
                start,
                params,
                budget=wb.settings.flow_budget if budget is None else budget,
                load_flow=host.load_flow,
                run_action=host.run_action,
                on_tick=ticked,
                gate=gate,
                cursor=cursor,
            )
        except KeepuiError:
            raise
        except Exception as exc:
            raise _unexpected(f"flow {name!r}", exc) from exc
    if host.mutations:  # a tick that ended the run without on_tick
        host.apply()
    if host.warnings or host.applied:
        from dataclasses import replace

        result = replace(result, warnings=list(host.warnings), applied=list(host.applied))
    return result
