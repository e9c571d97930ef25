"""The keepui command line; exit codes 0 ok, 1 usage, 2 not found or store/provider error,
130 interrupted (Ctrl-C or SIGTERM)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the fast path (keepui.cli.thin) must not import it
if TYPE_CHECKING:
    from typing import Any

    from keepui_engine import Workbench


def one_blas_thread() -> None:
    """Let numpy's BLAS use one thread unless the user chose (before numpy loads).

    A keepui process multiplies one query vector at a time; spread over every core, those
    products only fight each other when several keepui processes run at once (16 processes
    on 2 cores on PostgreSQL: 1.5 puts/s with a thread per core, 10.8 with one;
    benchmarks/bench_pg_load.py). Batch embedding runs in torch (MKL and OpenMP threads), which
    this leaves be.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def leave_abandoned_work(wb: Workbench, code: int = 0) -> None:
    """Exit now when a thread still computes something nobody waits for, once the workbench
    is closed: its queue worker in a task it was told to abandon (a summary in the model: its
    claim is back in the queue and its result would be dropped), or a thread of the TUI still
    reading (a find embedding its query). Python would wait for the TUI's threads at exit,
    and a process that finalises while a thread runs the model can abort in its thread pool.
    """
    import threading

    me = threading.current_thread()
    busy = [t for t in threading.enumerate() if t is not me and not t.daemon and t.is_alive()]
    if wb.background_running or busy:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and map failures to exit codes (never a traceback, never a silent exit)."""
    args = without_no_server(sys.argv[1:] if argv is None else argv)
    one_blas_thread()
    from keepui_engine.core.private import use_private_umask

    use_private_umask()  # every file keepui writes (store, WAL, logs, exports) is the user's
    code: int | None = None
    if args:
        from keepui.cli import thin

        try:
            code = thin.run(args)  # an everyday command, whole, to the store's server
        except KeyboardInterrupt:
            code = _interrupted("--json" in args or "--nl" in args)
    if code is None:
        install_reporters()
        code = run_args(args)
    if argv is None:  # this process is the command: nothing is left to write
        exit_now(code)
    sys.exit(code)


def install_reporters() -> None:
    """Say on stderr what keeps the command waiting: "loading the embedding model…",
    "starting a server…", "replacing the server of STORE…" (a spinner on a terminal)."""
    from keepui.cli.spinner import StderrReporter
    from keepui_engine.core import notices, owner

    owner.say = _say
    notices.reporter = StderrReporter()


def exit_now(code: int) -> None:
    """End the process without the interpreter's finalisation, which takes seconds once torch
    and DuckDB are loaded (an interrupted `put DIR` spent 2.5 s of its 3 s there). Every
    store is closed by now; what is buffered on stdout and stderr is written first."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs this fast path 8 ms of imports
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe: nothing more can be said
    os._exit(code)


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def without_no_server(args: list[str]) -> list[str]:
    """The arguments without `--no-server` (anywhere before `--`), which sets
    KEEPUI_NO_SERVER=1 for this process: the command runs here, not in the store's server."""
    end = args.index("--") if "--" in args else len(args)
    if "--no-server" not in args[:end]:
        return args
    os.environ["KEEPUI_NO_SERVER"] = "1"
    return [a for a in args[:end] if a != "--no-server"] + args[end:]


def run_args(args: list[str], *, remote: bool = False) -> int:
    """Run one command line in this process; its exit code.

    Args:
        args: The arguments after `keepui`.
        remote: Run for a client of this process (`keepui serve`): no terminal of our own
            (no workbench, no signal handlers).
    """
    from keepui.cli.output import json_wanted

    json_ = json_wanted(args)
    try:
        if not args and not remote and sys.stdin.isatty() and sys.stdout.isatty():
            from keepui.cli.tui import run_tui  # bare `keepui`: the workbench, no Typer detour

            code: int | None = run_tui(None)
        elif not args:  # not in a terminal (a script, a pipe): the help, as before
            code = _run_typer(["--help"], json_)
        else:
            if not remote and args[0] not in (
                "tui",
                "serve",
                "serve-pg",
                "mcp",
            ):  # those handle signals their own way
                from keepui_engine import install_interrupts

                install_interrupts()
            from keepui.cli import fastfind

            code = fastfind.run(args)
            if code is None:
                code = _run_typer(args, json_)
    except BrokenPipeError:
        code = 0
    except KeyboardInterrupt:
        code = _interrupted(json_)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: an error, not a traceback
        code = _unexpected(exc, json_)
    return 0 if code is None else code


def _run_typer(args: list[str], json_: bool = False) -> int:
    from typer import exceptions as tx

    from keepui.cli.app import command
    from keepui.cli.output import emit_error, report_error
    from keepui_engine import KeepuiError

    try:
        rv = command().main(args=args, standalone_mode=False, prog_name="keepui")
    except tx.Exit as exc:
        if exc.exit_code == 130 and isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(json_)  # Typer turns Ctrl-C inside a command into Exit(130)
        return int(exc.exit_code)
    except tx.Abort:
        return emit_error("usage", "aborted", None, title="", code=1, json_=json_)
    except tx.TyperException as exc:  # usage errors: missing or bad arguments and options
        ctx = getattr(exc, "ctx", None)
        name = ctx.command_path if ctx is not None else "keepui"
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return emit_error("usage", message, f"try '{name} --help'", title="", code=1, json_=json_)
    except KeepuiError as exc:
        return report_error(exc, json_)
    return rv if isinstance(rv, int) else 0  # a typer.Exit(code) comes back as its code


def _interrupted(json_: bool) -> int:
    from keepui.cli.output import report_error
    from keepui_engine import Interrupted

    return report_error(
        Interrupted("interrupted before the command finished; nothing half-done was kept"),
        json_,
    )


def _unexpected(exc: Exception, json_: bool) -> int:
    from keepui.cli.output import emit_error

    return emit_error(
        "store",
        f"unexpected {type(exc).__name__}: {exc}",
        "please report this with the command you ran",
        title="Unexpected error",
        code=2,
        json_=json_,
    )


def __getattr__(name: str) -> Any:
    if name == "app":  # the Typer app, imported only when asked for
        from keepui.cli.app import app

        return app
    raise AttributeError(name)
