"""`keepui eval`: score dense, BM25 and hybrid retrieval on a BEIR-format dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag
from keepui.cli.output import emit_json, note, out
from keepui_engine import UsageError, evaluate, open_workbench, write_runs


def eval_(
    corpus: Annotated[Path | None, typer.Option("--corpus", help="BEIR corpus.jsonl.")] = None,
    queries: Annotated[Path | None, typer.Option("--queries", help="BEIR queries.jsonl.")] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="qrels tsv: query-id corpus-id score.")
    ] = None,
    judged: Annotated[
        bool,
        typer.Option(
            "--judged",
            help="Score the store itself on its own judged queries (keepui judge) instead.",
        ),
    ] = False,
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

    With --judged, no corpus: the store (--store or KEEPUI_STORE) is scored on the queries
    you judged with keepui judge (or + / - in the workbench), through the same trec_eval.

    \b
    Examples:
      keepui eval --corpus corpus.jsonl --queries queries.jsonl --qrels qrels/test.tsv
      keepui eval ... --mode hybrid --run hybrid.trec --json
      keepui eval --judged --store ~/notes --json
    """
    if judged:
        if corpus or queries or qrels:
            raise UsageError(
                "--judged scores the store's own judgments: drop --corpus/--queries/--qrels."
            )
        _eval_judged(mode, store, run, json_)
        return
    missing = [
        n
        for n, v in (("--corpus", corpus), ("--queries", queries), ("--qrels", qrels))
        if v is None
    ]
    if missing:
        raise UsageError(
            f"missing {', '.join(missing)} (or give --judged to score your own judgments)."
        )
    assert corpus is not None and queries is not None and qrels is not None
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


def _eval_judged(mode: list[str] | None, store: Path | None, run: Path | None, json_: bool) -> None:
    with open_workbench(store, create=False) as wb:
        result = wb.eval_judged(mode)
    if run is not None:
        for path in write_runs(result, run):
            note(f"wrote {path}")
    if json_:
        emit_json({**result.to_dict(), "judged": True})
        return
    note(f"{result.queries} judged queries over {result.docs} documents in {result.store}")
    out(f"{'mode':8s} {'nDCG@10':>8s} {'R@100':>8s} {'MRR@10':>8s} {'p50 ms':>7s}")
    for name, m in result.modes.items():
        out(
            f"{name:8s} {m['ndcg@10']:8.4f} {m['recall@100']:8.4f} {m['mrr@10']:8.4f} "
            f"{m['query_p50_ms']:7.1f}"
        )
    out("")
    modes = list(result.modes)
    out("nDCG@10 per query: " + "  ".join(f"{m:>7s}" for m in modes) + "  query")
    for query in result.per_query[modes[0]]:
        cells = "  ".join(f"{result.per_query[m][query]['ndcg@10']:7.4f}" for m in modes)
        out(f"{'':19s}{cells}  {query}")
