"""`keepui context|reflect|now`: what an agent asks of its memory."""

from __future__ import annotations

from typing import Annotated

import typer

from keepui.cli.options import (
    FilterOpt,
    JsonFlag,
    StoreOpt,
    TagOpt,
    bounded_count,
    finite_score,
)
from keepui.cli.output import emit_json, note, out
from keepui_engine import Item, StoreError, now_id, open_workbench

ModeOpt = Annotated[
    str | None,
    typer.Option("--mode", "-m", help="dense, bm25 or hybrid [default: [search] mode]."),
]
TopKOpt = Annotated[
    int, typer.Option("--top-k", "-k", help="Search this many hits.", callback=bounded_count)
]
HistoryOpt = Annotated[
    bool,
    typer.Option(
        "--history", help="Also cite older versions (by default only current ones are searched)."
    ),
]
AllOpt = Annotated[
    bool, typer.Option("--all", help="Also cite the now notes and system documents.")
]


def context(
    query: Annotated[str, typer.Argument(help="What the prompt is about, in words.")],
    top_k: TopKOpt = 5,
    min_score: Annotated[
        float,
        typer.Option(
            "--min-score", help="Leave out hits scoring below this.", callback=finite_score
        ),
    ] = 0.1,
    max_tokens: Annotated[
        int,
        typer.Option(
            "--max-tokens",
            help="Budget in words, [Source] markers included.",
            callback=bounded_count,
        ),
    ] = 2048,
    tag: FilterOpt = None,
    mode: ModeOpt = None,
    header: Annotated[
        bool,
        typer.Option("--header", help="Start with an instruction to cite the sources."),
    ] = False,
    history: HistoryOpt = False,
    all_: AllOpt = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Print the top passages for a prompt, each followed by [Source: ID].

    Passages come from current versions only (--history: older ones too, cited ID@V{N}).
    A passage is the part that matched (ID@P{N}) or the version's text. They
    fill --max-tokens words in rank order; a passage that does not fit whole is cut after a
    sentence, and the ones after it are dropped.

    \b
    Examples:
      keepui context "how do we rotate API keys"
      keepui context "deployment checklist" --max-tokens 500 -t project=atlas --json
    """
    with open_workbench(store, create=False) as wb:
        result = wb.context(
            query,
            top_k=top_k,
            min_score=min_score,
            max_tokens=max_tokens,
            tags=tag,
            mode=mode,
            header=header,
            history=history,
            include_system=all_,
        )
    if json_:
        emit_json(result.to_dict())
        return
    for line in result.notes:
        note(line)
    if not result.passages:
        note(f"no passages for {query!r}")
        return
    out(result.text)


def reflect(
    query: Annotated[str, typer.Argument(help="What to reflect on, in words.")],
    kind: Annotated[
        str, typer.Option("--kind", help="summary, or key-points (3 to 5, each with its source).")
    ] = "summary",
    top_k: TopKOpt = 5,
    tag: FilterOpt = None,
    mode: ModeOpt = None,
    store_back: Annotated[
        bool,
        typer.Option(
            "--store-back",
            help="Save it as an item tagged type=reflection, query=QUERY, source=ID per hit.",
        ),
    ] = False,
    history: HistoryOpt = False,
    all_: AllOpt = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Summarize the top hits for a query (or list their key points).

    Extractive (the hits' own sentences, chosen by the embedding model) unless keepui.toml
    [summarization] names an LLM provider, which then writes it.

    \b
    Examples:
      keepui reflect "what did we decide about storage"
      keepui reflect "auth incidents" --kind key-points --store-back --json
    """
    with open_workbench(store, create=False) as wb:
        result = wb.reflect(
            query,
            kind=kind,
            top_k=top_k,
            tags=tag,
            mode=mode,
            store_back=store_back,
            history=history,
            include_system=all_,
        )
    if json_:
        emit_json(result.to_dict())
        return
    for line in result.notes:
        note(line)
    if result.text:
        out(result.text)
    if result.sources:
        note(f"from {len(result.sources)} hit(s): {', '.join(result.sources)} ({result.method})")
    if result.stored:
        note(f"stored as {result.stored}")


def now(
    text: Annotated[
        str | None, typer.Argument(help="The new note; without it, print the current one.")
    ] = None,
    scope: Annotated[
        str | None, typer.Option("--scope", help="A named note: now:NAME instead of now.")
    ] = None,
    tag: TagOpt = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Show or replace the working-intentions note (what you or an agent are doing now).

    Replacing it keeps the previous text as a version (keepui get now --history).

    \b
    Examples:
      keepui now "Reviewing the auth design; next: rotate keys"
      keepui now                       # print it
      keepui now --scope agent-7 "Indexing the papers folder" --json
    """
    try:  # reading never creates a store (a directory or a PostgreSQL database)
        with open_workbench(store, create=text is not None) as wb:
            item = wb.now(text, scope=scope, tags=tag)
    except StoreError as exc:
        if text is not None or exc.title != "No store":
            raise
        item = Item(now_id(scope), 0, 0, 0, "", "", {}, "", "", "")  # no store yet: empty
    if json_:
        emit_json(item.to_dict())
        return
    if item.version == 0:
        note(f'{item.id} is empty (set it with: keepui now "what you are working on")')
        return
    out(item.text if item.text is not None else item.summary)
    if text is not None:
        note(f"{item.id} is now version {item.version}")
