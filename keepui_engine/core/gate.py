"""Gate: who may use an owned store's one connection now, and the slow steps that let go of it.

An owner (`keepui serve`, the TUI, `keepui mcp`) serves many threads from one connection. Reads
take turns on the connection; writers also take turns among themselves. A slow step that does
not touch the store (a model embedding texts, an LLM writing a summary) runs `outside()` it:

- a foreground writer (a client's put) lends the connection to readers meanwhile, but keeps
  other writers out, because what it read before the step must still hold when it commits;
- a background task (the queue worker) lets go of everything, and re-checks what it read
  before it writes its result (see `work.tasks`);
- a reader keeps its turn: one read sees one state of the store; except in its opening step
  (`reader_opening`: a find's query embedded before it reads anything), which lends it.

A step inside an open transaction never lets go (the transaction is on the shared connection).

Readers come first: a background task takes the connection (for its next task, or back after
its slow step) only when no reader is waiting for it, so a read waits for at most one short
store step of the worker, never for a task. When the owner closes, a background task is
abandoned at its next checkpoint (the start or the end of its slow step): `Abandoned` is
raised there and the task touches the store no more; the owner gives its claim back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

Mode = Literal["read", "write", "background"]


class Abandoned(BaseException):  # noqa: N818 - not an error: the owner is closing
    """The owner is closing: the background task stops here without touching the store (a
    BaseException, so that no handler records it as the task's failure)."""


_local = threading.local()


class _Turn:
    """A reentrant lock that its holder can let go of entirely and take back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._depth = 0

    def acquire(self) -> None:
        me = threading.get_ident()
        if self._owner == me:
            self._depth += 1
            return
        self._lock.acquire()
        self._owner, self._depth = me, 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._lock.release()

    def mine(self) -> bool:
        return self._owner == threading.get_ident()

    def release_all(self) -> int:
        depth, self._depth, self._owner = self._depth, 0, None
        self._lock.release()
        return depth

    def restore(self, depth: int) -> None:
        self._lock.acquire()
        self._owner, self._depth = threading.get_ident(), depth


class Gate:
    """Turns on one store connection: readers one at a time, writers one at a time, and a
    writer's slow steps open to readers (see the module docstring)."""

    def __init__(self) -> None:
        self._db = _Turn()  # using the connection
        self._write = _Turn()  # being the writer
        self._readers = 0  # readers waiting for the connection
        self._no_readers = threading.Condition()
        self.closing = threading.Event()
        """Set by the owner as it closes: background tasks are abandoned (`Abandoned`)."""

    def close(self) -> None:
        """Abandon background tasks at their next checkpoint (the owner is closing)."""
        self.closing.set()

    @contextmanager
    def enter(self, mode: Mode) -> Iterator[None]:
        """Hold the connection for one operation (`read`, `write` or `background`).

        Raises:
            Abandoned: A background task, once the owner closes (it holds nothing then).
        """
        stack: list[tuple[Gate, Mode]] = _stack()
        if mode == "background" and not self._db.mine():
            self._after_readers()
        if mode != "read":
            self._write.acquire()
        try:
            self._take_db(mode)
            stack.append((self, mode))
            try:
                if mode == "background":
                    self.check()
                yield
            finally:
                stack.pop()
                self._db.release()
        finally:
            if mode != "read":
                self._write.release()

    def check(self) -> None:
        """Raise Abandoned once the owner closes (a background task's checkpoint)."""
        if self.closing.is_set():
            raise Abandoned

    def _take_db(self, mode: Mode, depth: int = 0) -> None:
        """Take the connection (back, at `depth`, after a lend); a reader says that it
        waits, so background work lets it in first."""
        take = (lambda: self._db.restore(depth)) if depth else self._db.acquire
        if mode != "read" or self._db.mine():
            take()
            return
        with self._no_readers:
            self._readers += 1
            self._no_readers.notify_all()
        try:
            take()
        finally:
            with self._no_readers:
                self._readers -= 1
                if not self._readers:
                    self._no_readers.notify_all()

    def wait_for_readers(self, n: int, timeout: float | None = None) -> bool:
        """Wait until at least `n` readers wait for the connection; False on timeout (for
        tests that need a reader queued behind a turn, without sleeping)."""
        with self._no_readers:
            return self._no_readers.wait_for(lambda: self._readers >= n, timeout)

    def _after_readers(self) -> None:
        """Wait until no reader waits for the connection (background work goes last)."""
        with self._no_readers:
            self._no_readers.wait_for(lambda: not self._readers)

    @contextmanager
    def lent(self, mode: Mode) -> Iterator[None]:
        """Let go of the connection (and, for a background task, of the writer's turn) for
        the block, then take it back (a background task after waiting readers).

        Raises:
            Abandoned: A background task whose owner closes, before or after the block
                (holding the connection again, as its `enter` expects).
        """
        background = mode == "background" and self._write.mine()
        if background:
            self.check()
        depth = self._db.release_all()
        wdepth = self._write.release_all() if background else 0
        try:
            yield
        finally:
            if background:
                self._after_readers()
                self._write.restore(wdepth)
            self._take_db(mode, depth)
            if background:
                self.check()  # even after a failed step: its failure is not recorded


def _stack() -> list[tuple[Gate, Mode]]:
    stack: list[tuple[Gate, Mode]] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _in_transaction(lock: Any) -> bool:
    """Whether this thread holds the store's transaction lock (True when that cannot be told:
    then the connection is not lent)."""
    owned = getattr(lock, "_is_owned", None)
    return True if owned is None else bool(owned())


@contextmanager
def reader_opening(lends: bool = True) -> Iterator[None]:
    """A read's opening step, before it reads anything that later reads must agree with (a
    find embedding its query): its slow steps (`outside`) lend the connection to others.

    Args:
        lends: False for a read that has read before (a find inside `why`): no lending.
    """
    before = getattr(_local, "opening", False)
    _local.opening = lends
    try:
        yield
    finally:
        _local.opening = before


@contextmanager
def outside(store_lock: Any) -> Iterator[None]:
    """Run a slow step that does not touch the store without holding it (see the module
    docstring); a no-op outside an owner's gate, for a reader (but in its opening step), and
    inside a transaction.

    Args:
        store_lock: The store's transaction lock (`store.lock`; None when the store has
            none to tell): held by this thread means a transaction is open on the shared
            connection, which must not be lent.
    """
    stack = _stack()
    modes = {m for _, m in stack}
    reading = modes == {"read"}
    opening = reading and getattr(_local, "opening", False)
    if not stack or (reading and not opening) or _in_transaction(store_lock):
        yield
        return
    gate, first = stack[0]
    saved = list(stack)
    stack.clear()  # this thread holds nothing of the gate during the step
    try:
        with gate.lent(first):
            yield
    finally:
        stack[:] = saved
