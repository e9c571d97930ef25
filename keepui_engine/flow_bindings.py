"""The one adapter between the storage-free flow runtime and the Workbench: docs and actions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from keepui_engine.errors import FlowError, NotFound, UsageError
from keepui_engine.flows import actions, loader, signals
from keepui_engine.flows.model import FlowDoc, FlowInfo
from keepui_engine.types import FindQuery

if TYPE_CHECKING:
    from keepui_engine.api import Workbench

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


class FlowHost:
    """Loads state docs (the store's `.state/NAME` first, then the shipped ones) and runs
    actions through a Workbench, so flows work the same in the TUI, the CLI and a client.

    Args:
        wb: The Workbench every action goes through.
    """

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb

    def load_flow(self, name: str) -> FlowDoc:
        """The state doc called `name` (raises NotFound naming the ones there are)."""
        try:
            return loader.parse(self.wb.get(STATE_PREFIX + name).text or "", name)
        except NotFound:
            pass
        doc = loader.builtin_doc(name)
        if doc is None:
            known = ", ".join(info.name for info in self.flows())
            raise NotFound(
                f"no state doc {name!r}: run one of {known}, put your own as "
                f"{STATE_PREFIX}{name}, or give a YAML file with --file."
            )
        return doc

    def flows(self) -> list[FlowInfo]:
        """Every state doc that can be run: shipped ones, and the store's (which win)."""
        out = {
            name: FlowInfo(name, "builtin", doc.description)
            for name in loader.builtin_names()
            if (doc := loader.builtin_doc(name)) is not None
        }
        for item in self.wb.list_items(STATE_PREFIX, limit=1000):
            name = item.id[len(STATE_PREFIX) :]
            try:
                text = item.text if item.text is not None else self.wb.get(item.id).text
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
        """related: for each of the top three results, the documents nearest its summary."""
        limit = int(args.get("limit") or 3)
        groups: dict[str, list[dict[str, Any]]] = {}
        for hit in (args.get("results") or [])[:3]:
            text = str(hit.get("summary") or "")[:500]
            if not text.strip():
                continue
            found = self.wb.find_query(FindQuery(text, [], limit + 1, mode="dense"))
            groups[hit["id"]] = [h.to_dict() for h in found.hits if h.id != hit["id"]][:limit]
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
    "get": FlowHost.get,
    "related": FlowHost.related,
    "pick": lambda host, args: actions.pick(args.get("candidates") or []),
    "expand": lambda host, args: actions.expand(
        str(args.get("query") or ""), args.get("results"), args.get("terms")
    ),
}
