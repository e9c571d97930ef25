"""`keepui eval`: score dense, BM25 and hybrid retrieval on a BEIR-format dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag
from keepui.cli.output import emit_json, note, out
from keepui_engine import evaluate, write_runs


def eval_(
    corpus: Annotated[Path, typer.Option("--corpus", help="BEIR corpus.jsonl.")],
    queries: Annotated[Path, typer.Option("--queries", help="BEIR queries.jsonl.")],
    qrels: Annotated[Path, typer.Option("--qrels", help="qrels tsv: query-id corpus-id score.")],
    mode: Annotated[
        list[str] | None,
        typer.Option("--mode", "-m", help="dense, bm25 or hybrid (repeatable) [default: all]."),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            "-s",
            help="Store to ingest into [default: a cached scratch "
            "store for this corpus and model].",
        ),
    ] = None,
    run: Annotated[
        Path | None,
        typer.Option(
            "--run",
            help="Also write the top 100 per query as a TREC run file "
            "(one per mode: run.trec -> run.dense.trec when several).",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Ingest a BEIR corpus and print nDCG@10, Recall@100 and MRR@10 for each mode.

    \b
    Examples:
      keepui eval --corpus corpus.jsonl --queries queries.jsonl --qrels qrels/test.tsv
      keepui eval ... --mode hybrid --run hybrid.trec --json
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TimeRemainingColumn,
    )

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def tick(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        result = evaluate(corpus, queries, qrels, modes=mode, store=store, progress=tick)
    if run is not None:
        for path in write_runs(result, run):
            note(f"wrote {path}")
    if json_:
        emit_json(result.to_dict())
        return
    note(
        f"{result.docs} documents, {result.queries} queries; store {result.store}"
        + (f" (ingested in {result.ingest_s:.1f} s)" if result.ingest_s else " (reused)")
    )
    out(f"{'mode':8s} {'nDCG@10':>8s} {'R@100':>8s} {'MRR@10':>8s} {'p50 ms':>7s} {'p95 ms':>7s}")
    for name, m in result.modes.items():
        out(
            f"{name:8s} {m['ndcg@10']:8.4f} {m['recall@100']:8.4f} {m['mrr@10']:8.4f} "
            f"{m['query_p50_ms']:7.1f} {m['query_p95_ms']:7.1f}"
        )
