"""`keepui tui` and bare `keepui`: the workbench; the only CLI module that imports keepui.app."""

from __future__ import annotations

import typer

from keepui.cli.options import StoreOpt
from keepui.cli.output import report_error


def run_tui(store: str | None) -> int:
    """Own the store, serve it to other keepui processes, and run the TUI until it quits.

    Returns:
        The exit code (2 when the store cannot be opened).
    """
    from keepui_engine import KeepuiError, open_workbench

    try:
        wb = open_workbench(store, own=True)
    except KeepuiError as exc:
        return report_error(exc)
    try:
        wb.serve()
        from keepui.app import KeepuiApp  # deferred: the data CLI never loads Textual

        KeepuiApp(wb).run()
    finally:
        wb.close()
    return 0


def tui(store: StoreOpt = None) -> None:
    """Open the research workbench on the store (also what bare `keepui` does).

    While it runs it owns the store; `keepui find` and `put` elsewhere go through it.

    F1 inside lists the keys.
    """
    code = run_tui(store)
    if code:
        raise typer.Exit(code)
