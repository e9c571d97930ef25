"""The cross-process store lock: a flock on `store.lock`, held while the DuckDB file is open."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from keepui_engine.core.errors import StoreError

LOCK_NAME = "store.lock"
QUEUE_NAME = "store.queue"
MAX_PAUSE = 0.005


def _try_flock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


class StoreLock:
    """An exclusive advisory lock on a store directory.

    DuckDB lets one process open a file read-write and blocks everyone else, readers included,
    so every keepui process takes this lock before it opens the database and drops it after
    closing. Waiting happens here, with a deadline, instead of on DuckDB's open error.

    Fairness: a process first takes the turnstile `store.queue`, then the store lock, then lets
    go of the turnstile. A waiter holds the turnstile while it waits, so a process that has
    just released the store lock cannot take it straight back past the waiter.
    """

    def __init__(self, store: Path) -> None:
        self.path = store / LOCK_NAME
        self.queue = store / QUEUE_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def _took(self, fd: int) -> None:
        self._fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def try_acquire(self) -> bool:
        """Take the lock if it is free and nobody is queued for it; never waits."""
        if self._fd is not None:
            return True
        turn = _try_flock(self.queue)
        if turn is None:
            return False
        try:
            fd = _try_flock(self.path)
            if fd is not None:
                self._took(fd)
        finally:
            _unlock(turn)
        return self._fd is not None

    def acquire(self, timeout: float, give_up: Callable[[], bool] | None = None) -> bool:
        """Wait up to `timeout` seconds for the lock, in turn with other waiters.

        Args:
            timeout: Longest wait in seconds.
            give_up: Polled while waiting; when it returns True the wait ends without the
                lock (used to switch to a store server that has just started).

        Returns:
            True when the lock was taken, False when `give_up` said to stop.

        Raises:
            StoreError: The deadline passed.
        """
        if self._fd is not None:
            return True
        deadline = time.monotonic() + timeout
        turn: int | None = None
        pause = 0.0005
        try:
            while True:
                if turn is None:
                    turn = _try_flock(self.queue)
                if turn is not None:
                    fd = _try_flock(self.path)
                    if fd is not None:
                        self._took(fd)
                        return True
                if give_up is not None and give_up():
                    return False
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"the store {self.path.parent} stayed locked by another keepui process "
                        f"(pid {self.holder() or '?'}) for {timeout:.0f} s. Wait for it to "
                        "finish, or raise [store] lock_timeout_s in keepui.toml.",
                        "Store busy",
                    )
                time.sleep(pause)
                pause = min(pause * 1.5, MAX_PAUSE)
        finally:
            if turn is not None:
                _unlock(turn)

    def holder(self) -> str | None:
        """The pid written by the current holder, if readable."""
        try:
            return self.path.read_text().strip() or None
        except OSError:
            return None

    def release(self) -> None:
        """Drop the lock (safe to call twice)."""
        if self._fd is not None:
            _unlock(self._fd)
            self._fd = None
