"""`keepui flow`: run a state doc (query-resolve …) and watch its ticks; resume with a cursor."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from keepui.cli.options import FilterOpt, JsonFlag, NlFlag, StoreOpt
from keepui.cli.output import emit_json, first_line, note, out
from keepui_engine import FlowResult, FlowTick, UsageError, open_workbench, parse_flow_params


def flow(
    name: Annotated[
        str, typer.Argument(help="State doc to run: query-resolve, find-deep, or your own.")
    ] = "query-resolve",
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="The query (same as -p query=TEXT).")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="Param KEY=VALUE, e.g. -p margin_high=0.2 (repeat)."),
    ] = None,
    tags: FilterOpt = None,
    budget: Annotated[
        int | None, typer.Option("--budget", "-b", help="Most ticks [default: keepui.toml, 5].")
    ] = None,
    file: Annotated[
        str | None,
        typer.Option("--file", "-f", help="Run this YAML state doc (- reads stdin) as NAME."),
    ] = None,
    cursor: Annotated[
        str | None, typer.Option("--cursor", "-c", help="Resume a stopped flow from its cursor.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the state docs and exit.")] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
    nl: NlFlag = False,
) -> None:
    """Run a flow: each tick searches, reads the signals and routes (done, branch, explore …).

    Exit 0 when it ends done or stopped (budget, ambiguous: see `reason` and `cursor`); 1 for
    bad params or when the state doc rejects its input (no query); 2 when an action fails or
    the state doc is not found.

    \b
    Examples:
      keepui flow -q "what authentication approach should we use?"
      keepui flow query-resolve -q "auth" -t project=api -p margin_high=0.2 --budget 8 --json
      keepui flow --nl -q "auth"                 # one JSON line per tick as it happens
      keepui flow --cursor TOKEN --budget 5      # go on from where a stopped run ended
      keepui flow my-flow -f my-flow.yaml -q "auth"
      keepui flow --list
    """
    if json_ and nl:
        raise UsageError("choose one of --json and --nl.")
    params = parse_flow_params(param)
    if query is not None:
        params["query"] = query
    if tags:
        params["tags"] = list(tags)
    doc = _read_doc(file) if file else None
    with open_workbench(store, create=False) as wb:
        if list_:
            infos = wb.flows()
            if json_:
                emit_json({"flows": [i.to_dict() for i in infos]})
            else:
                for info in infos:
                    out(f"{info.name:<18} {info.origin:<8} {info.description}")
            return
        result = wb.run_flow(
            name,
            params,
            budget=budget,
            doc=doc,
            cursor=cursor,
            on_tick=_nl_tick if nl else (None if json_ else _text_tick),
        )
    for warning in result.warnings:
        note(f"warning: {warning}")
    if json_:
        emit_json(result.to_dict())
    elif nl:
        sys.stdout.write(json.dumps({"type": "result", **_lean(result)}) + "\n")
    else:
        _text_result(result)
    if result.status == "error":
        note(f"Error: flow {result.flow} ended in error: {result.reason}")
        # A state doc that returns error has judged its input, and a malformed doc or action
        # argument is a usage error (1); an action that failed is 2.
        kind = result.data.get("error_type")
        raise typer.Exit(2 if kind and kind not in ("FlowError", "UsageError") else 1)


def _read_doc(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    path = Path(file)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--file {file}: cannot read it ({exc.strerror}).") from exc


def _lean(result: FlowResult) -> dict[str, Any]:
    d = result.to_dict()
    d.pop("ticks")
    return d


def _nl_tick(tick: FlowTick) -> None:
    sys.stdout.write(json.dumps({"type": "tick", **tick.to_dict()}) + "\n")
    sys.stdout.flush()


def _text_tick(tick: FlowTick) -> None:
    out(f"tick {tick.tick}  {tick.state}  ({tick.elapsed_ms:.0f} ms)  → {tick.outcome}")
    for rule in tick.rules:
        if rule.when and rule.fired:
            out(f"    ✓ {rule.rule}: {rule.when}" + (f"  → {rule.outcome}" if rule.outcome else ""))
    for call in tick.searches:
        o = call.output
        tags = f" [{', '.join(o.get('tags') or [])}]" if o.get("tags") else ""
        out(
            f"    {call.rule}: find {o.get('query')!r}{tags} {o.get('mode')}: {o['count']} hits  "
            f"margin {o['margin']:.3f}  entropy {o['entropy']:.3f}  "
            f"lineage {o['lineage_strong']:.2f}"
        )
        for hit in o["results"][:3]:
            out(f"      {hit['score']:.3f}  {hit['id']}  {first_line(hit.get('summary', ''), 60)}")
    sys.stdout.flush()


def _text_result(result: FlowResult) -> None:
    path = " → ".join(result.history)
    out(
        f"{result.status}: {result.reason}  ({len(result.ticks)} tick(s), "
        f"{result.elapsed_ms:.0f} ms: {path})"
    )
    for hit in result.results[:10]:
        out(f"  {hit['score']:.3f}  {hit['id']}  {first_line(hit.get('summary', ''), 70)}")
    if result.cursor:
        note(f"resume with: keepui flow --cursor {result.cursor}")
