"""Change notices between processes on a PostgreSQL store (LISTEN/NOTIFY).

Every write transaction sends `NOTIFY keepui_changes` just before its COMMIT (PostgreSQL
delivers it at the commit, once per transaction, and never for one that rolled back). A
`ChangeFeed` holds its own connection that LISTENs, so a reader (the TUI) learns of a write
by any process on any machine at once instead of polling for it.
"""

from __future__ import annotations

from typing import Any

CHANNEL = "keepui_changes"
NOTIFY = f"NOTIFY {CHANNEL}"


class ChangeFeed:
    """Waits for writes committed to the store by any process.

    Args:
        url: The store's database URL.
    """

    def __init__(self, url: str) -> None:
        import psycopg

        from keepui_engine.core.errors import StoreError
        from keepui_engine.store.postgres.schema import redact

        try:
            self._con: Any = psycopg.connect(url, autocommit=True)
            self._con.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot listen for changes on {redact(url)}: {str(exc).strip()}",
                "Cannot reach PostgreSQL",
            ) from exc

    def wait(self, timeout: float) -> int:
        """How many write transactions committed since the last call, waiting up to `timeout`
        seconds for the first one (0 when none came)."""
        got = 0
        for _ in self._con.notifies(timeout=timeout, stop_after=1):
            got += 1
        if got:  # more that arrived with it are the same news
            for _ in self._con.notifies(timeout=0.0):
                got += 1
        return got

    def close(self) -> None:
        """Stop listening and close the connection."""
        self._con.close()
