"""`keepui tui` and bare `keepui`: the workbench (the one CLI module that imports keepui.tui)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import typer

from keepui.cli import leave_abandoned_work
from keepui.cli.options import StoreOpt
from keepui.cli.output import report_error


def run_tui(store: str | None) -> int:
    """Own the store, serve it to other keepui processes, and run the TUI until it quits.

    Returns:
        The exit code (2 when the store cannot be opened).
    """
    import os
    import sys

    from keepui_engine import KeepuiError, open_workbench

    # A store named by --store or KEEPUI_STORE must exist (a typo must not open an empty
    # workbench); the default ~/.keepui is created on first use, as `put` would.
    explicit = bool(store or os.environ.get("KEEPUI_STORE"))
    if explicit:
        try:
            open_workbench(store, create=False).close()
        except KeepuiError as exc:
            return report_error(exc)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(
            "Error: the workbench needs a terminal (stdin and stdout are not both one). "
            "Run keepui in a terminal, or use the commands: keepui --help.\n"
        )
        return 1
    try:
        wb = open_workbench(store, own=True)
    except KeepuiError as exc:
        return report_error(exc)
    try:
        wb.serve()
        from keepui.tui.app import KeepuiApp  # deferred: the data CLI never loads Textual

        asyncio.run(run_app(KeepuiApp(wb)))
    finally:
        wb.close()  # waits for a write in flight (its turn on the store), not for reads
    leave_abandoned_work(wb)
    return 0


class _QuitWithoutWaiting(ThreadPoolExecutor):
    """The app's thread workers: quitting does not wait for one still running (a find whose
    query is in the model: its answer has nowhere to go)."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=True)


async def run_app(app: Any) -> None:
    """Run the app as `App.run` does, its thread workers in `_QuitWithoutWaiting`."""
    asyncio.get_running_loop().set_default_executor(_QuitWithoutWaiting())
    await app.run_async()


def tui(store: StoreOpt = None) -> None:
    """Open the research workbench on the store (also what bare `keepui` does).

    While it runs it owns the store; `keepui find` and `put` elsewhere go through it.

    F1 inside lists the keys.
    """
    code = run_tui(store)
    if code:
        raise typer.Exit(code)
