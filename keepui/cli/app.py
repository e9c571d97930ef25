"""The Typer application: every command, its options and help."""

from __future__ import annotations

import functools
import os
import sys
from typing import Annotated

import typer
import typer.main

from keepui.cli import (
    agents,
    config_cmd,
    diff,
    doctor,
    evaluate,
    find,
    flow,
    items,
    judging,
    pending,
    serve,
    transfer,
    tui,
    tuning,
)
from keepui.cli.options import StoreOpt

app = typer.Typer(
    name="keepui",
    help="A versioned, searchable memory store and research workbench.",
    no_args_is_help=False,  # bare `keepui` opens the workbench
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain Click help: Rich markup ate "[default: ...]" and "[search]"
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", "-s", help="Store directory for every command [default: ~/.keepui]."
        ),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    no_server: Annotated[
        bool,
        typer.Option(
            "--no-server",
            help="Run in this process; start no owner process for the store (as "
            "KEEPUI_NO_SERVER=1). Accepted anywhere on the command line.",
        ),
    ] = False,
) -> None:
    """A versioned, searchable memory store and research workbench."""
    if version:
        from keepui import __version__

        sys.stdout.write(f"keepui {__version__}\n")
        raise typer.Exit(0)
    if store:
        os.environ["KEEPUI_STORE"] = store
    if ctx.invoked_subcommand is None:
        code = tui.run_tui(store)
        if code:
            raise typer.Exit(code)


app.command("put")(items.put)
app.command("get")(items.get)
app.command("find")(find.find)
app.command("list")(items.list_)
app.command("tag")(items.tag)
app.command("del")(items.delete)
app.command("stats")(items.stats)
app.command("reindex")(items.reindex)
app.command("doctor")(doctor.doctor)
app.command("eval")(evaluate.eval_)
app.command("serve")(serve.serve)
app.command("serve-pg")(serve.serve_pg)
app.command("pending")(pending.pending)
app.command("analyze")(pending.analyze)
app.command("flow")(flow.flow)
# Negative offsets (`keepui diff ID -1 0`) are versions, not options.
app.command("diff", context_settings={"ignore_unknown_options": True})(diff.diff)
app.command("tui")(tui.tui)
app.command("context")(agents.context)
app.command("reflect")(agents.reflect)
app.command("now")(agents.now)
app.command("export")(transfer.export)
app.command("import")(transfer.import_)
app.command("judge")(judging.judge)
app.command("config")(config_cmd.config)
app.add_typer(judging.judgments_app, name="judgments")
judging.judgments_app.command("import")(tuning.judgments_import)
app.add_typer(tuning.queryset_app, name="queryset")
app.add_typer(tuning.experiment_app, name="experiment")


@app.command("mcp")
def _mcp(store: StoreOpt = None) -> None:
    """Serve this store to AI agents over the Model Context Protocol (stdio).

    Tools: put, get, find, context, flow, now; resources: the now note and keepui://ID.
    It uses the keepui process that already holds the store (serve or the workbench), else
    holds the store itself. Only protocol messages go to stdout; logs go to stderr.
    """
    from keepui.agents.mcp.server import run_stdio  # the mcp SDK is imported only for this command
    from keepui.cli import leave_abandoned_work

    leave_abandoned_work(run_stdio(store))


# What each option's value is called in --help (Typer would print <str>, <list[str]> …).
_METAVARS = {
    "--store": "PATH",
    "--tag": "K[=V]",
    "--limit": "N",
    "--since": "WHEN",
    "--until": "WHEN",
    "--mode": "MODE",
    "--min-score": "SCORE",
    "--fusion": "score|share|rrf",
    "--beir": "DIR",
    "--compare": "MODE",
    "--rerank": "ORDER",
    "--why": "ID",
    "--id": "ID",
    "--text": "TEXT",
    "--summary": "TEXT",
    "--exclude": "GLOB",
    "--remove": "KEY",
    "--sort": "ORDER",
    "--version": "N",
    "--query": "QUERY",
    "--param": "KEY=VALUE",
    "--budget": "N",
    "--file": "FILE",
    "--cursor": "CURSOR",
    "--context": "N",
    "--corpus": "FILE",
    "--queries": "FILE",
    "--qrels": "FILE",
    "--run": "FILE",
    "--top-k": "K",
    "--as-of": "WHEN",
    "--max-tokens": "N",
    "--kind": "summary|key-points",
    "--scope": "NAME",
    "--grade": "0..3",
}


_ARGS = {"doc_id": "ID"}


@functools.cache
def command() -> typer.main.TyperGroup:
    """The Click command for the app, with readable metavars on every option and argument
    (built once: `keepui serve` runs many command lines)."""
    root = typer.main.get_command(app)
    commands = [root, *getattr(root, "commands", {}).values()]
    for cmd in commands:
        for param in cmd.params:
            if param.metavar is not None or getattr(param, "is_flag", False):
                continue
            longs = [o for o in param.opts if o.startswith("--")]
            if longs:
                param.metavar = _METAVARS.get(longs[0], longs[0][2:].upper())
            elif param.name:
                param.metavar = name = _ARGS.get(param.name, param.name.upper())
                # Typer would add `<str>` after the name and wrap a required one in braces.
                param.display_type_rich = lambda ctx: None  # type: ignore[attr-defined]
                shown = name if param.required else f"[{name}]"
                param._usage_display_name = lambda shown=shown: shown  # type: ignore[attr-defined]
    return root  # type: ignore[return-value]
