"""The Typer application: every command, its options and help."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from keepui.cli import diff, evaluate, find, flow, items, pending, serve, tui

app = typer.Typer(
    name="keepui",
    help="A versioned, searchable memory store and research workbench.",
    no_args_is_help=False,  # bare `keepui` opens the workbench
    add_completion=False,
    pretty_exceptions_enable=False,
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
app.command("eval")(evaluate.eval_)
app.command("serve")(serve.serve)
app.command("pending")(pending.pending)
app.command("analyze")(pending.analyze)
app.command("flow")(flow.flow)
# Negative offsets (`keepui diff ID -1 0`) are versions, not options.
app.command("diff", context_settings={"ignore_unknown_options": True})(diff.diff)
app.command("tui")(tui.tui)
