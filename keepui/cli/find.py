"""`keepui find QUERY`: search by meaning with tag and time filters."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from keepui.cli.options import (
    FilterOpt,
    IdsFlag,
    JsonFlag,
    NlFlag,
    StoreOpt,
    bounded_count,
    finite_score,
)
from keepui.cli.output import emit_json, out, render_find
from keepui_engine import FindQuery, UsageError, open_workbench


def find(
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    tag: FilterOpt = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "-n",
            help="At most this many hits [default: the configuration's limit, else 10].",
            callback=bounded_count,
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only versions written at or after: 2026-11-01, 2026-11-01T09:00, P7D, PT1H.",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Only versions written before (same forms as --since)."),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode", "-m", help="dense, bm25 or hybrid [default: [search] mode in keepui.toml]."
        ),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score", help="Hide hits whose final score is below this.", callback=finite_score
        ),
    ] = None,
    fusion: Annotated[
        str | None,
        typer.Option(
            "--fusion", help="Hybrid fusion: score, share or rrf [default: [search] fusion]."
        ),
    ] = None,
    dedup: Annotated[
        bool | None,
        typer.Option(
            "--dedup/--no-dedup",
            help="Fold near-duplicate hits into the newest [default: [search] dedup].",
            show_default=False,
        ),
    ] = None,
    rerank: Annotated[
        str | None,
        typer.Option(
            "--rerank", help="Order: relevance, recency or mix [default: [search] rerank]."
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Search the versions current then: 2026-10-01 (the end of that day) or "
            "2026-10-01T09:30 (local time).",
        ),
    ] = None,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Also search older versions (each filtered by its own tags); such a hit "
            "says which version matched.",
        ),
    ] = False,
    all_: Annotated[
        bool,
        typer.Option(
            "--all", help="Include system documents (ids starting with .) and the now notes."
        ),
    ] = False,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep", help="Under each hit, its linked documents and its nearest by meaning."
        ),
    ] = False,
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve",
            help="Run the query-resolve flow (narrow, branch or explore until a clear answer).",
        ),
    ] = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="With --resolve: show every tick of the flow.")
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
    nl: NlFlag = False,
    ids: IdsFlag = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each hit's score components as a table.")
    ] = False,
    why: Annotated[
        str | None,
        typer.Option("--why", help="Say where this id ranked in each channel and what removed it."),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help="Search with a named configuration ([search.configs.NAME]; keepui config "
            "--configs lists them); the options above still win.",
        ),
    ] = None,
) -> None:
    """Find documents by meaning and words (hybrid), after tag/time filters.

    Searches the current version of each document (and its parts); --history also searches
    older versions, --as-of the versions current at a past moment. Each hit's score is the
    fused dense + BM25 score times recency decay; --explain shows the parts, --why ID says
    what happened to one document. Near-duplicates fold into the newest.

    \b
    Examples:
      keepui find "why did we pick duckdb"
      keepui find "auth bugs" -t project=atlas --since P30D -n 5 --json
      keepui find "meeting notes" --ids | xargs -n1 keepui get
      keepui find "pricing decision" --as-of 2026-10-01   # what it said then
      keepui find "pricing decision" --history            # older versions too
    """
    if sum((json_, nl, ids, explain)) > 1:
        raise UsageError("choose one of --json, --nl, --ids and --explain.")
    if trace and not resolve:
        raise UsageError("--trace shows the ticks of --resolve; add --resolve.")
    if resolve:
        clash = [
            flag
            for flag, given in (
                ("--since", since),
                ("--until", until),
                ("--as-of", as_of),
                ("--fusion", fusion),
                ("--rerank", rerank),
                ("--min-score", min_score),
                ("--deep", deep),
                ("--why", why),
                ("--explain", explain),
                ("--dedup/--no-dedup", dedup is not None),
                ("--all", all_),
                ("--history", history),
                ("--config", config),
            )
            if given
        ]
        if clash:
            raise UsageError(f"--resolve runs the query-resolve flow; it does not take {clash[0]}.")
        from keepui.cli.resolve import find_resolve

        code = find_resolve(
            query, tag, limit or 10, mode, store, json_=json_, nl=nl, ids=ids, trace=trace
        )
        if code:
            raise typer.Exit(code)
        return
    q = FindQuery(
        query,
        list(tag or []),
        10 if limit is None else limit,
        since,
        until,
        mode,
        min_score,
        fusion,
        dedup,
        rerank,
        as_of,
        all_,
        history,
        config=config,
    )
    if why is not None:
        with open_workbench(store, create=False) as wb:
            if config is not None and limit is None:  # the configuration's limit, as find's
                q = replace(q, limit=wb.tuning.limit(config))
            story = wb.why(why, q)
        if json_:
            emit_json(story.to_dict())
            return
        out(story.explanation)
        for channel, got in story.channels.items():
            where = f"#{got['rank']} (score {got['score']:.4f}, {got['matched']})" if got else "–"
            out(f"  {channel:5s} {where}")
        for name, ok in story.passes.items():
            out(f"  {name} filter: {'passes' if ok else 'removes it'}")
        return
    with open_workbench(store, create=False) as wb:
        if config is not None and limit is None:
            q = replace(q, limit=wb.tuning.limit(config))
        result = wb.find_deep(q) if deep else wb.find_query(q)
    if explain:
        from keepui.cli.explain import render_explain

        render_explain(result)
        return
    render_find(result, json_=json_, nl=nl, ids=ids)
