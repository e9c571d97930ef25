"""`keepui serve`: own the store and answer other keepui processes over its socket."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Annotated

import typer

from keepui.cli import leave_abandoned_work
from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note
from keepui_engine import open_workbench, start_local_postgres, stop_local_postgres


def serve(store: StoreOpt = None, json_: JsonFlag = False) -> None:
    """Keep the store open with the model loaded, so other keepui commands answer fast.

    \b
    Other keepui processes on this store talk to this one over a Unix socket while it runs;
    stop it with Ctrl+C or SIGTERM.
    """
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if hasattr(signal, "SIGXFSZ"):  # past a file-size limit a write fails, it does not kill us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    with open_workbench(store, own=True) as wb:
        wb.warm_up()
        wb.serve(on_note=note)
        note(f"keepui: serving {wb.store} (Ctrl+C to stop)")
        if json_:  # one line when ready, for scripts that start a server and wait for it
            emit_json({"store": str(wb.store), "pid": os.getpid(), "state": "serving"})
            sys.stdout.flush()
        while not stop.wait(0.25):  # a timed wait lets the main thread run signal handlers
            pass
    note("keepui: stopped")
    leave_abandoned_work(wb)


def serve_pg(
    directory: Annotated[str, typer.Argument(help="Where the PostgreSQL data lives.")],
    shared_buffers: Annotated[
        str | None,
        typer.Option(
            "--shared-buffers",
            metavar="SIZE",
            help="PostgreSQL's shared_buffers, e.g. 2GB: room for the HNSW index (about 1.1 GB "
            "per million vectors). Kept in DIRECTORY for later starts.",
        ),
    ] = None,
    stop_: Annotated[
        bool,
        typer.Option(
            "--stop",
            help="Stop the PostgreSQL serving DIRECTORY (and its serve-pg), also one left "
            "running by a serve-pg that was killed.",
        ),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Start a local PostgreSQL with pgvector in DIRECTORY for trying the PostgreSQL backend.

    \b
    Prints its URL on stdout; use it as --store URL (or KEEPUI_STORE). Stops on Ctrl+C,
    SIGTERM, or `keepui serve-pg DIRECTORY --stop` from another terminal.
    """
    if stop_:
        done = stop_local_postgres(directory)
        if json_:
            emit_json({"data": directory, "state": "stopped", "detail": done})
        note(f"keepui: {done}")
        return
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    url, shutdown = start_local_postgres(directory, shared_buffers)
    try:
        if json_:
            emit_json({"url": url, "pid": os.getpid(), "state": "serving"})
        else:
            print(url)
        sys.stdout.flush()
        note(f"keepui: PostgreSQL with pgvector serving {directory} (Ctrl+C to stop)")
        while not stop.wait(0.25):  # a timed wait lets the main thread run signal handlers
            pass
    finally:
        shutdown()
    note("keepui: stopped")
