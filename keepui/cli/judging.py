"""`keepui judge` and `keepui judgments`: relevance judgments, your own test collection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag, NlFlag, StoreOpt
from keepui.cli.output import emit_json, emit_ndjson, note, out
from keepui_engine import UsageError, open_workbench

judgments_app = typer.Typer(
    help="List and export relevance judgments.",
    no_args_is_help=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def judge(
    query: Annotated[str, typer.Argument(help="The query, as you searched it.")],
    doc_id: Annotated[str, typer.Argument(help="The document judged.")],
    grade: Annotated[
        int | None,
        typer.Option("--grade", "-g", help="0 not relevant, 1 somewhat, 2 relevant, 3 the answer."),
    ] = None,
    remove: Annotated[bool, typer.Option("--remove", help="Forget this judgment instead.")] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Record how relevant a document is to a query (the latest judgment wins).

    Judged queries become a test collection: keepui eval --judged scores every search mode
    on them, and keepui judgments export --qrels writes them as TREC qrels.

    \b
    Examples:
      keepui judge "key rotation policy" keys-2026 --grade 3
      keepui judge "key rotation policy" old-wiki-page --grade 0
    """
    if remove == (grade is not None):
        raise UsageError("give --grade 0..3, or --remove to forget the judgment.")
    with open_workbench(store, create=False) as wb:
        if remove:
            gone = wb.unjudge(query, doc_id)
            if json_:
                emit_json({"query": query, "id": doc_id, "removed": gone})
            else:
                note("removed" if gone else f"no judgment of {doc_id} for that query")
            return
        assert grade is not None
        made = wb.judge(query, doc_id, grade)
    if json_:
        emit_json(made.to_dict())
    else:
        note(f"judged {made.id} {made.grade} for {made.query!r} ({made.qid})")


@judgments_app.callback(invoke_without_command=True)
def judgments(
    ctx: typer.Context,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Only this query's judgments.")
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
    nl: NlFlag = False,
) -> None:
    """List the judgments (query, id, grade, when), by query.

    \b
    Examples:
      keepui judgments --json
      keepui judgments export --qrels mine.qrels --queries mine-queries.jsonl
    """
    if ctx.invoked_subcommand is not None:
        return
    with open_workbench(store, create=False) as wb:
        found = wb.judgments(query)
    records = [j.to_dict() for j in found]
    if json_:
        emit_json({"judgments": records})
        return
    if nl:
        emit_ndjson(records)
        return
    if not found:
        note("no judgments yet (keepui judge QUERY ID --grade N)")
    for j in found:
        out(f"{j.qid}\t{j.grade}\t{j.id}\t{j.query}")


@judgments_app.command("export")
def export_qrels(
    qrels: Annotated[Path, typer.Option("--qrels", help="Write TREC qrels here (- for stdout).")],
    queries: Annotated[
        Path | None,
        typer.Option("--queries", help="Also write the queries as BEIR queries.jsonl here."),
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Write the judgments as TREC qrels (`qid 0 docid grade`), the queries as BEIR JSONL."""
    from keepui_engine import qrels_lines, queries_lines

    with open_workbench(store, create=False) as wb:
        found = wb.judgments()
    lines = qrels_lines(found)
    text = "".join(line + "\n" for line in lines)
    if str(qrels) == "-":
        if json_:
            raise UsageError("--json reports on a qrels FILE; with - the qrels are the output.")
        typer.echo(text, nl=False)
    else:
        qrels.write_text(text, encoding="utf-8")
    if queries is not None:
        rows = queries_lines(found)
        queries.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    if json_:
        emit_json(
            {"qrels": str(qrels), "judgments": len(lines), "queries": len(queries_lines(found))}
        )
    elif str(qrels) != "-":
        note(f"wrote {len(lines)} judgment(s) to {qrels}")
