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
from keepui.cli.output import emit_json, note, out
from keepui.cli.remote import install_routing, run_command
from keepui_engine import (
    UsageError,
    Workbench,
    open_workbench,
    start_local_postgres,
    stop_local_postgres,
)
from keepui_engine.core import notices, owner, wire


def serve(
    store: StoreOpt = None,
    json_: JsonFlag = False,
    status: Annotated[
        bool,
        typer.Option("--status", help="Tell whether a server runs for the store, and which."),
    ] = False,
    stop_: Annotated[
        bool, typer.Option("--stop", help="Stop the store's server and wait until it has.")
    ] = False,
    auto: Annotated[bool, typer.Option("--auto", hidden=True)] = False,
) -> None:
    """Keep the store open with the model loaded, so other keepui commands answer fast.

    \b
    Commands that need the model start one on their own (`serve --auto`, which exits after
    [server] idle_exit seconds without work); run it by hand to keep one up. Other keepui
    processes on this store talk to it over a Unix socket; stop it with Ctrl+C, SIGTERM or
    `keepui serve --stop`. --no-server (or KEEPUI_NO_SERVER=1) runs a command without one.

    \b
    Examples:
      keepui serve --status --json
      keepui serve --stop
    """
    if status and stop_:
        raise UsageError("choose one of --status and --stop.")
    if status or stop_:
        _report(store, stop_, json_)
        return
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if hasattr(signal, "SIGXFSZ"):  # past a file-size limit a write fails, it does not kill us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    kind = "auto" if auto else "serve"
    with open_workbench(store, own=True, lean=True) as wb:
        wb.warm_up()
        notices.reporter = None  # what a client's command loads is not the log's business
        install_routing()  # the fast path's commands print into their own buffers
        wb.serve(on_note=note, kind=kind, front={"__cli__": run_command})
        note(f"keepui: serving {wb.store} (pid {os.getpid()}, Ctrl+C to stop)")
        if json_:  # one line when ready, for scripts that start a server and wait for it
            emit_json({"store": str(wb.store), "pid": os.getpid(), "state": "serving"})
            sys.stdout.flush()
        idle_exit = wb.settings.idle_exit_s if auto else 0.0
        if auto:
            owner.register(str(wb.store))
            for other in owner.trim():
                note(
                    f"keepui: asked the idle server of {other} to stop (at most "
                    f"{owner.max_servers()} run at once)"
                )
        try:
            while not stop.wait(0.25):  # a timed wait lets the main thread run signal handlers
                why = _why_stop(wb, idle_exit)
                if why:
                    note(f"keepui: {why}: stopping")
                    break
        finally:
            if auto:
                owner.unregister()
    note("keepui: stopped")
    leave_abandoned_work(wb)


def _why_stop(wb: Workbench, idle_exit: float) -> str | None:
    """Why the server should stop now: asked to, idle too long, or its store is gone."""
    if wb.stop_asked:
        return "asked to stop (keepui serve --stop, or an owner taking over)"
    if idle_exit and wb.idle_seconds() >= idle_exit:
        return f"idle for {idle_exit:g} s ([server] idle_exit)"
    if not (wb.store / "keepui.duckdb").exists():
        return f"{wb.store} is gone"
    return None


def _report(store: str | None, stop_: bool, json_: bool) -> None:
    """`serve --status` and `serve --stop`."""
    path = wire.store_dir(store)
    info = owner.stop(path) if stop_ else owner.hello(path)
    state = ("stopped" if stop_ else "running") if info else "stopped"
    if json_:
        emit_json({"store": path, "state": state, "running": state == "running", **(info or {})})
        return
    if info is None:
        note(f"keepui: no server runs for {path}")
        out("stopped")
        return
    if stop_:
        note(f"keepui: stopped the server of {path} (pid {info.get('pid')})")
        out("stopped")
        return
    out("running")
    for key in ("pid", "kind", "version", "build", "model", "started", "idle_s", "requests", "log"):
        if info.get(key) is not None:
            out(f"{key}: {info[key]}")


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
