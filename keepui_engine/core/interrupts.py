"""Ctrl-C and SIGTERM for long commands: raise at once, except inside a commit (`shield`).

A command line installs the handler; it then raises KeyboardInterrupt in the main thread as
soon as a signal arrives, unless the main thread is inside `shield()`, where the request is
recorded and raised (as `Deferred`) when the shielded block has finished. Code that runs C
libraries which swallow Python exceptions calls `check()` after them. Processes that never
install it (the TUI, `keepui serve`, tests) see no change: `shield()` is then a no-op.

Two environment variables let tests interrupt a real process at a chosen moment without
sleeping: `KEEPUI_TEST_TRACE=1` writes `keepui: at STAGE` to stderr at each `checkpoint`, and
`KEEPUI_TEST_HOLD=STAGE[:N]` also waits at the N-th arrival at STAGE (default the first)
until a signal comes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Deferred(KeyboardInterrupt):
    """An interrupt that arrived inside `shield()`: the shielded block completed first."""


class _State:
    def __init__(self) -> None:
        self.installed = False
        self.signum: int | None = None
        self.count = 0  # signals received
        self.depth = 0
        self.arrived = threading.Event()
        self.seen: Counter[str] = Counter()


_state = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    _state.signum = signum
    _state.count += 1
    _state.arrived.set()
    if _state.depth == 0:
        raise KeyboardInterrupt


def install() -> None:
    """Make SIGINT and SIGTERM interrupt this process's main thread (call from it)."""
    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)
    _state.installed = True


def requested() -> bool:
    """Whether an interrupt has arrived."""
    return _state.signum is not None


def check() -> None:
    """Raise KeyboardInterrupt if an interrupt has arrived (after a library that may have
    swallowed it); once interrupted, a process stays interrupted."""
    if _state.signum is not None and _state.depth == 0 and _on_main():
        raise KeyboardInterrupt


def _on_main() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def shield() -> Iterator[None]:
    """Run a block that must finish once started (a commit); an interrupt that arrives during
    it is raised as `Deferred` when the outermost shield ends."""
    if not (_state.installed and _on_main()):
        yield
        return
    before = _state.count
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
    if _state.depth == 0 and _state.count != before:
        raise Deferred


def checkpoint(stage: str) -> None:
    """A named moment of a long command, for tests that interrupt it there (see module doc)."""
    hold = os.environ.get("KEEPUI_TEST_HOLD")
    if not hold and not os.environ.get("KEEPUI_TEST_TRACE"):
        return
    _state.seen[stage] += 1
    sys.stderr.write(f"keepui: at {stage}\n")
    sys.stderr.flush()
    name, _, nth = (hold or "").partition(":")
    if name == stage and _state.seen[stage] == int(nth or 1):
        sys.stderr.write(f"keepui: holding at {stage}\n")
        sys.stderr.flush()
        while not _state.arrived.wait(0.05):  # the handler raises here outside a shield
            pass
        check()
