"""`keepui eval`: score dense, BM25 and hybrid retrieval on a BEIR-format dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag
from keepui.cli.output import emit_json, note, out
from keepui.cli.spinner import BarReporter, PlainProgress
from keepui_engine import EvalResult, UsageError, evaluate, open_workbench, write_runs
from keepui_engine.core import notices


def eval_(
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="BEIR corpus.jsonl, or a BEIR folder (as --beir)."),
    ] = None,
    queries: Annotated[Path | None, typer.Option("--queries", help="BEIR queries.jsonl.")] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="qrels tsv: query-id corpus-id score.")
    ] = None,
    beir: Annotated[
        Path | None,
        typer.Option(
            "--beir",
            help="A BEIR dataset folder: corpus.jsonl, queries.jsonl and qrels/test.tsv "
            "(--queries/--qrels override the last two).",
        ),
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
        typer.Option(
            "--mode",
            "-m",
            help="dense, bm25, hybrid, or hybrid:FUSION such as hybrid:rrf (repeatable) "
            "[default: dense, bm25, hybrid].",
        ),
    ] = None,
    compare: Annotated[
        str | None,
        typer.Option(
            "--compare",
            help="Test every other mode's nDCG@10 against this one's (paired randomization "
            "test and the 95% interval of the difference) [default: hybrid when scored, else "
            "the first mode].",
        ),
    ] = None,
    keep_identical_ids: Annotated[
        bool,
        typer.Option(
            "--keep-identical-ids",
            help="Keep a query's own id in its ranking (by default it is dropped, as BEIR's "
            "evaluator does: in ArguAna and Quora the queries are documents too).",
        ),
    ] = False,
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

    Each figure comes with its 95% bootstrap interval over the queries, and every mode is
    compared with the reference (--compare; default hybrid when scored): the mean difference
    in nDCG@10, its 95% interval and the p-value of a paired randomization test. A difference
    whose interval spans 0 (p > 0.05) is noise as far as these queries can tell.

    With --judged, no corpus: the store (--store or KEEPUI_STORE) is scored on the queries
    you judged with keepui judge (or + / - in the workbench), through the same trec_eval.

    \b
    Examples:
      keepui eval --beir ../beir/scifact
      keepui eval --corpus corpus.jsonl --queries queries.jsonl --qrels qrels/test.tsv
      keepui eval --beir ../beir/arguana -m dense -m hybrid -m hybrid:rrf --compare dense
      keepui eval ... --mode hybrid --run hybrid.trec --json
      keepui eval --judged --store ~/notes --json
    """
    if judged:
        if corpus or queries or qrels or beir:
            raise UsageError(
                "--judged scores the store's own judgments: drop --corpus/--queries/--qrels/--beir."
            )
        _eval_judged(mode, compare, store, run, json_)
        return
    if beir is not None and corpus is not None:
        raise UsageError("give --beir DIR or --corpus, not both.")
    corpus = beir or corpus
    if corpus is None or (not corpus.is_dir() and (queries is None or qrels is None)):
        given = (("--corpus", corpus), ("--queries", queries), ("--qrels", qrels))
        missing = [n for n, v in given if v is None]
        raise UsageError(
            f"missing {', '.join(missing)} (or give --beir DIR, or --judged to score your own "
            "judgments)."
        )
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)  # stdout is the table
    plain = PlainProgress()
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}
        if console.is_terminal:
            notices.reporter = BarReporter(bar)

        def tick(phase: str, done: int, total: int) -> None:
            if not console.is_terminal:  # a log or a pipe: a line now and then
                plain(phase, done, total)
                return
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        result = evaluate(
            corpus,
            queries,
            qrels,
            modes=mode,
            store=store,
            progress=tick,
            compare=compare,
            ignore_identical_ids=not keep_identical_ids,
        )
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
    _table(result)
    if result.identical_ids == "dropped":
        out("a query's own id is dropped from its ranking (BEIR's default; --keep-identical-ids)")
    else:
        out("a query's own id is kept in its ranking (--keep-identical-ids)")


def _table(result: EvalResult) -> None:
    """Each mode's means with the 95% interval of nDCG@10, then its difference to the reference."""
    width = max(8, *(len(m) for m in result.modes))
    out(
        f"{'mode':{width}s} {'nDCG@10':>8s} {'95% CI':>15s} {'R@100':>7s} {'MRR@10':>7s} "
        f"{'p50 ms':>7s} {'p95 ms':>7s}  vs {result.reference}: ΔnDCG@10 [95% CI] p"
    )
    for name, m in result.modes.items():
        low, high = result.intervals[name]["ndcg@10"]
        c = result.compared.get(name)
        versus = (
            "reference"
            if c is None
            else f"{c['delta']:+.4f} [{c['low']:+.3f}, {c['high']:+.3f}] {_p(float(c['p']))}"
        )
        out(
            f"{name:{width}s} {m['ndcg@10']:8.4f} [{low:.3f}, {high:.3f}] "
            f"{m['recall@100']:7.4f} {m['mrr@10']:7.4f} {m['query_p50_ms']:7.1f} "
            f"{m['query_p95_ms']:7.1f}  {versus}"
        )


def _p(p: float) -> str:
    """A p-value as people read it: `p<0.001`, `p=0.03`."""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def _eval_judged(
    mode: list[str] | None, compare: str | None, store: Path | None, run: Path | None, json_: bool
) -> None:
    with open_workbench(store, create=False) as wb:
        modes = list(mode or ["dense", "bm25", "hybrid"])
        if compare and compare not in modes:
            modes.append(compare)
        result = wb.eval_judged(modes)
    if compare:
        result = result.compared_with(compare)
    if run is not None:
        for path in write_runs(result, run):
            note(f"wrote {path}")
    if json_:
        emit_json({**result.to_dict(), "judged": True})
        return
    note(f"{result.queries} judged queries over {result.docs} documents in {result.store}")
    _table(result)
    out("")
    modes = list(result.modes)
    out("nDCG@10 per query: " + "  ".join(f"{m:>7s}" for m in modes) + "  query")
    for query in result.per_query[modes[0]]:
        cells = "  ".join(f"{result.per_query[m][query]['ndcg@10']:7.4f}" for m in modes)
        out(f"{'':19s}{cells}  {query}")
