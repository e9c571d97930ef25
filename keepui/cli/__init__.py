"""The keepui command line; exit codes 0 ok, 1 usage, 2 not found or store/provider error."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from typer import exceptions as tx

from keepui.cli import find, items, serve

app = typer.Typer(
    name="keepui",
    help="A versioned, searchable memory store and research workbench.",
    no_args_is_help=True,
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
        sys.stdout.write(ctx.get_help() + "\n")


app.command("put")(items.put)
app.command("get")(items.get)
app.command("find")(find.find)
app.command("list")(items.list_)
app.command("tag")(items.tag)
app.command("del")(items.delete)
app.command("stats")(items.stats)
app.command("reindex")(items.reindex)
app.command("serve")(serve.serve)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and map failures to exit codes (never a traceback for known errors)."""
    from keepui_engine import KeepuiError

    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args or ["--help"], standalone_mode=False, prog_name="keepui")
    except tx.Exit as exc:
        sys.exit(exc.exit_code)
    except tx.Abort:
        sys.stderr.write("Aborted.\n")
        sys.exit(1)
    except tx.TyperException as exc:  # usage errors: missing or bad arguments and options
        ctx = getattr(exc, "ctx", None)
        name = ctx.command_path if ctx is not None else "keepui"
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        sys.stderr.write(f"Error: {message}\nTry '{name} --help'.\n")
        sys.exit(1)
    except KeepuiError as exc:
        sys.stderr.write(f"Error: {exc.title}: {exc.message}\n")
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(0)
