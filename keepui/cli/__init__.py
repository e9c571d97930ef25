"""The keepui command line; exit codes 0 ok, 1 usage, 2 not found or store/provider error."""

from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and map failures to exit codes (never a traceback for known errors)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if not args and sys.stdin.isatty() and sys.stdout.isatty():
            from keepui.cli.tui import run_tui  # bare `keepui`: the workbench, no Typer detour

            code: int | None = run_tui(None)
        elif not args:  # not in a terminal (a script, a pipe): the help, as before
            code = _run_typer(["--help"])
        else:
            from keepui.cli import fastfind

            code = fastfind.run(args)
        if code is None:
            code = _run_typer(args)
    except BrokenPipeError:
        code = 0
    sys.exit(code)


def _run_typer(args: list[str]) -> int:
    from typer import exceptions as tx

    from keepui.cli.app import app
    from keepui.cli.output import report_error
    from keepui_engine import KeepuiError

    try:
        rv = app(args=args, standalone_mode=False, prog_name="keepui")
    except tx.Exit as exc:
        return int(exc.exit_code)
    except tx.Abort:
        sys.stderr.write("Aborted.\n")
        return 1
    except tx.TyperException as exc:  # usage errors: missing or bad arguments and options
        ctx = getattr(exc, "ctx", None)
        name = ctx.command_path if ctx is not None else "keepui"
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        sys.stderr.write(f"Error: {message}\nTry '{name} --help'.\n")
        return 1
    except KeepuiError as exc:
        return report_error(exc)
    return rv if isinstance(rv, int) else 0  # a typer.Exit(code) comes back as its code


def __getattr__(name: str) -> Any:
    if name == "app":  # the Typer app, imported only when asked for
        from keepui.cli.app import app

        return app
    raise AttributeError(name)
