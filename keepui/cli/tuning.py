"""`keepui queryset`, `keepui experiment` and `keepui judgments import`: tuning search on the
store's own notes (query sets, experiments, the pairwise comparison, the optimizer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keepui.cli import tuning_text as text
from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note
from keepui.cli.spinner import PlainProgress
from keepui_engine import UsageError, open_workbench

queryset_app = typer.Typer(
    help="Named sets of queries to run experiments on.",
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
experiment_app = typer.Typer(
    help="Run, compare and optimize search configurations on a query set.",
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@queryset_app.callback()
@experiment_app.callback()
def _group(ctx: typer.Context) -> None:
    """Without a subcommand: the group's help (exit 0)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


SetOpt = Annotated[
    str, typer.Option("--queries", "-q", metavar="SET", help="The query set (keepui queryset).")
]
ConfigsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        metavar="NAME",
        help="A search configuration (default is [search]; keepui config --configs lists them); "
        "repeatable.",
    ),
]


@queryset_app.command("add")
def queryset_add(
    name: Annotated[str, typer.Argument(help="The set's name (letters, digits, - and _).")],
    file: Annotated[
        Path | None,
        typer.Argument(help="A file of queries: one a line, or BEIR queries.jsonl."),
    ] = None,
    from_judgments: Annotated[
        bool, typer.Option("--from-judgments", help="The queries you have judged.")
    ] = False,
    from_history: Annotated[
        bool, typer.Option("--from-history", help="Your latest distinct searches.")
    ] = False,
    last: Annotated[
        int | None,
        typer.Option("--last", metavar="N", help="With --from-history: how many [default: 100]."),
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Store a query set (again: a new version of it).

    It is the document .queryset/NAME (type=queryset), one query a line, so keepui get,
    diff and export --include-system see it as any document.

    \b
    Examples:
      keepui queryset add mine --from-judgments
      keepui queryset add recent --from-history --last 50
      keepui queryset add scifact queries.jsonl
    """
    if last is not None and not from_history:
        raise UsageError("--last counts searches: give it with --from-history.")
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.add_queryset(
            name,
            from_judgments=from_judgments,
            from_history=from_history,
            last=100 if last is None else last,
            path=file,
        )
    text.render_queryset(got.to_dict(), json_=json_)


@queryset_app.command("list")
def queryset_list(store: StoreOpt = None, json_: JsonFlag = False) -> None:
    """List the query sets: name, queries, version, source, last change."""
    with open_workbench(store, create=False) as wb:
        sets = wb.tuning.querysets()
    text.render_querysets([s.to_dict() for s in sets], json_=json_)


@queryset_app.command("show")
def queryset_show(
    name: Annotated[str, typer.Argument(help="The set's name.")],
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Print a query set: each query's id, how many judgments it has, and the query."""
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.queryset(name)
    text.render_queryset(got.to_dict(), json_=json_)


def judgments_import(
    qrels: Annotated[
        Path, typer.Option("--qrels", help="qrels: query-id corpus-id score (BEIR) or TREC.")
    ],
    queries: Annotated[
        Path, typer.Option("--queries", help="BEIR queries.jsonl naming the qrels' queries.")
    ],
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Record the judgments of a qrels file, the inverse of keepui judgments export.

    Judgments of documents the store does not have, and of queries the queries file lacks,
    are not recorded; both are counted on stderr (--json: in the document).

    \b
    Examples:
      keepui judgments import --qrels qrels/test.tsv --queries queries.jsonl
    """
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.import_judgments(qrels, queries)
    if json_:
        emit_json(got.to_dict())
        return
    note(f"recorded {got.recorded} judgment(s) of {got.queries} queries from {got.qrels} line(s)")
    if got.missing_ids:
        some = ", ".join(got.missing_ids[:5])
        note(f"{len(got.missing_ids)} document id(s) the store does not have: {some}")
    if got.unknown_queries:
        some = ", ".join(got.unknown_queries[:5])
        note(f"{len(got.unknown_queries)} query id(s) not in {queries}: {some}")


@experiment_app.command("run")
def experiment_run(
    queries: SetOpt,
    config: ConfigsOpt = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            metavar="KIND@K",
            help="ndcg@K, p@K, mrr@K or recall@K (repeatable) [default: ndcg@10, p@5, "
            "mrr@10, recall@100].",
        ),
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Run every query of a set under each configuration and score them on the judgments.

    Per configuration each metric's mean with its 95% bootstrap interval; the paired
    randomization test of every pair (the first configuration is the reference); the queries
    each pair differs on most; the unjudged documents in each top 10 (the pool to judge
    next). The run is stored as a document (keepui experiment list).

    \b
    Examples:
      keepui experiment run --queries mine --config default --config words
      keepui experiment run -q mine -c default --metric ndcg@10 --metric recall@20 --json
    """
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.run(queries, list(config or ["default"]), metric, PlainProgress())
    text.render_experiment(got.to_dict(), json_=json_)


@experiment_app.command("list")
def experiment_list(
    queries: Annotated[
        str | None, typer.Option("--queries", "-q", metavar="SET", help="Only this query set.")
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """List past experiments, oldest first, with each configuration's scores: the store's
    quality over time."""
    with open_workbench(store, create=False) as wb:
        found = wb.tuning.experiments(queries)
    text.render_experiments([e.to_dict() for e in found], json_=json_)


@experiment_app.command("show")
def experiment_show(
    ref: Annotated[str, typer.Argument(metavar="ID", help="An experiment's id, or latest.")],
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Print a stored experiment as experiment run printed it."""
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.experiment(ref)
    text.render_experiment(got.to_dict(), json_=json_)


@experiment_app.command("compare")
def experiment_compare(
    queries: SetOpt,
    config: ConfigsOpt = None,
    k: Annotated[int, typer.Option("-k", "--depth", metavar="K", help="Compare the top K.")] = 10,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Compare two configurations' top K per query, no judgments needed.

    Per query: Jaccard@K, rank-biased overlap (p 0.9) and the documents only one side
    found; queries with the least overlap first: those are the ones to look at.

    \b
    Examples:
      keepui experiment compare --queries recent --config default --config words
    """
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.compare(queries, list(config or []), k, PlainProgress())
    text.render_comparison(got.to_dict(), json_=json_)


@experiment_app.command("optimize")
def experiment_optimize(
    queries: SetOpt,
    folds: Annotated[
        int, typer.Option("--folds", metavar="N", help="Folds of the cross-validation.")
    ] = 5,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Deals the queries into folds.")
    ] = 15,
    save: Annotated[
        str | None,
        typer.Option(
            "--save",
            metavar="NAME",
            help="Write the best settings as [search.configs.NAME] in keepui.toml.",
        ),
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Search hybrid fusion's settings on the set's judged queries, cross-validated.

    Fusion kind x dense/BM25 weight ratio x (score fusion) its prior. Reported: the held-out
    nDCG@10 (each fold scored with the settings chosen on the others, never a training
    score) beside the default's, the paired test and the interval of the difference (one
    that spans 0 is no gain). Refuses (exit 1) with fewer than 2 judged queries per fold.

    \b
    Examples:
      keepui experiment optimize --queries mine
      keepui experiment optimize --queries mine --folds 10 --save tuned
    """
    with open_workbench(store, create=False) as wb:
        got = wb.tuning.optimize(
            queries, folds=folds, seed=seed, save=save, progress=PlainProgress()
        )
    text.render_optimization(got.to_dict(), json_=json_)
