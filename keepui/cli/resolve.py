"""`keepui find QUERY --resolve [--trace]`: the query-resolve flow's answer, printed like find."""

from __future__ import annotations

from typing import Any

from keepui.cli.output import emit_json, note, render_find
from keepui_engine import FindResult, Hit, open_workbench


def find_resolve(
    query: str,
    tags: list[str] | None,
    limit: int,
    mode: str | None,
    store: str | None,
    *,
    json_: bool,
    nl: bool,
    ids: bool,
    trace: bool,
) -> int:
    """Run query-resolve and print its results; return the exit code (2 when it errs)."""
    params: dict[str, Any] = {"query": query, "tags": list(tags or []), "limit": limit}
    if mode:
        params["mode"] = mode
    with open_workbench(store, create=False) as wb:
        result = wb.run_flow("query-resolve", params)
    searches = [call.output for tick in result.ticks for call in tick.searches]
    used_mode = str(searches[0].get("mode")) if searches else (mode or "hybrid")
    hits = [Hit.from_dict(h) for h in result.results]
    found = FindResult(query, hits, limit, mode=used_mode, notes=list(result.warnings))
    flow: dict[str, Any] = {
        "status": result.status,
        "reason": result.reason,
        "ticks": len(result.ticks),
        "path": result.history,
    }
    if trace:
        flow["trace"] = [t.to_dict() for t in result.ticks]
    if json_:
        emit_json({**found.to_dict(), "hits": [h.to_dict() for h in hits], "flow": flow})
    else:
        if trace and not (nl or ids):
            from keepui.cli.flow import _text_tick

            for tick in result.ticks:
                _text_tick(tick)
        render_find(found, json_=False, nl=nl, ids=ids)
        note(
            f"query-resolve: {result.status}: {result.reason} "
            f"({len(result.ticks)} tick(s): {' → '.join(result.history)})"
        )
    return 2 if result.status == "error" else 0
