"""Whether a store directory can be written, asked without opening its database (and without
importing the store package: a client that only talks to the owner never loads numpy)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

DB_NAME = "keepui.duckdb"


def not_writable(root: Path) -> str | None:
    """Why keepui cannot write the store at `root`, or None when it can.

    Tried for real on the lock's files, which every writer opens read-write first (permission
    bits do not tell for root, nor for a read-only mount); the database file itself is never
    opened here: closing any descriptor of it would drop this process's DuckDB locks on it.
    """
    db = root / DB_NAME
    if not db.exists():
        return None  # no store yet: opening it says what is wrong
    for path in (root / "store.lock", root / "store.queue"):
        try:
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                return f"{path} cannot be written ({exc.strerror})"
            return None  # another failure: let opening the store report it
    if not os.access(db, os.W_OK):
        return f"{db} cannot be written (permission denied)"
    return None
