"""The cross-process store lock: a flock on `store.lock`, held while the DuckDB file is open."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from keepui_engine.errors import StoreError

LOCK_NAME = "store.lock"


class StoreLock:
    """An exclusive advisory lock on a store directory.

    DuckDB lets one process open a file read-write and blocks everyone else, readers included,
    so every keepui process takes this lock before it opens the database and drops it after
    closing. Waiting happens here, with a deadline, instead of on DuckDB's open error.
    """

    def __init__(self, store: Path) -> None:
        self.path = store / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return True

    def acquire(self, timeout: float, give_up: Callable[[], bool] | None = None) -> bool:
        """Wait up to `timeout` seconds for the lock.

        Args:
            timeout: Longest wait in seconds.
            give_up: Polled while waiting; when it returns True the wait ends without the
                lock (used to switch to a store server that has just started).

        Returns:
            True when the lock was taken, False when `give_up` said to stop.

        Raises:
            StoreError: The deadline passed.
        """
        deadline = time.monotonic() + timeout
        pause = 0.002
        while True:
            if self.try_acquire():
                return True
            if give_up is not None and give_up():
                return False
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"the store {self.path.parent} stayed locked by another keepui process "
                    f"(pid {self.holder() or '?'}) for {timeout:.0f} s. Wait for it to finish, "
                    "or raise [store] lock_timeout_s in keepui.toml.",
                    "Store busy",
                )
            time.sleep(pause)
            pause = min(pause * 1.5, 0.05)

    def holder(self) -> str | None:
        """The pid written by the current holder, if readable."""
        try:
            return self.path.read_text().strip() or None
        except OSError:
            return None

    def release(self) -> None:
        """Drop the lock (safe to call twice)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
