"""Gate: who may use an owned store's one connection now, and the slow steps that let go of it.

An owner (`keepui serve`, the TUI, `keepui mcp`) serves many threads from one connection. Reads
take turns on the connection; writers also take turns among themselves. A slow step that does
not touch the store (a model embedding texts, an LLM writing a summary) runs `outside()` it:

- a foreground writer (a client's put) lends the connection to readers meanwhile, but keeps
  other writers out, because what it read before the step must still hold when it commits;
- a background task (the queue worker) lets go of everything, and re-checks what it read
  before it writes its result (see `work.tasks`);
- a reader keeps its turn: one read sees one state of the store.

A step inside an open transaction never lets go (the transaction is on the shared connection).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

Mode = Literal["read", "write", "background"]

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

    @contextmanager
    def enter(self, mode: Mode) -> Iterator[None]:
        """Hold the connection for one operation (`read`, `write` or `background`)."""
        stack: list[tuple[Gate, Mode]] = _stack()
        if mode != "read":
            self._write.acquire()
        try:
            self._db.acquire()
            stack.append((self, mode))
            try:
                yield
            finally:
                stack.pop()
                self._db.release()
        finally:
            if mode != "read":
                self._write.release()

    @contextmanager
    def lent(self, mode: Mode) -> Iterator[None]:
        """Let go of the connection (and, for a background task, of the writer's turn) for
        the block, then take it back."""
        background = mode == "background" and self._write.mine()
        depth = self._db.release_all()
        wdepth = self._write.release_all() if background else 0
        try:
            yield
        finally:
            if background:
                self._write.restore(wdepth)
            self._db.restore(depth)


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
def outside(store_lock: Any) -> Iterator[None]:
    """Run a slow step that does not touch the store without holding it (see the module
    docstring); a no-op outside an owner's gate, for a reader, and inside a transaction.

    Args:
        store_lock: The store's transaction lock (`store.lock`; None when the store has
            none to tell): held by this thread means a transaction is open on the shared
            connection, which must not be lent.
    """
    stack = _stack()
    modes = {m for _, m in stack}
    if not stack or modes == {"read"} or _in_transaction(store_lock):
        yield
        return
    gate, first = stack[0]
    saved = list(stack)
    stack.clear()  # this thread holds nothing of the gate during the step
    try:
        with gate.lent("background" if first == "background" else "write"):
            yield
    finally:
        stack[:] = saved
