"""The CLI's reporter for slow engine steps (keepui_engine.core.notices): one line on stderr, a
spinner while it lasts when stderr is a terminal."""

from __future__ import annotations

import sys
import time

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from typing import Any


class StderrReporter:
    """Shows `keepui: LINE` at once; on a terminal it spins until the step ends, then says
    how long it took."""

    def __init__(self) -> None:
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def begin(self, line: str) -> None:
        """A slow step starts."""
        if not _is_terminal():
            sys.stderr.write(f"keepui: {line}\n")
            sys.stderr.flush()
            return
        import threading

        started = time.monotonic()
        stop = threading.Event()

        def spin() -> None:
            frame = 0
            while not stop.wait(0.1 if frame else 0.0):
                sys.stderr.write(f"\r{FRAMES[frame % len(FRAMES)]} keepui: {line}")
                sys.stderr.flush()
                frame += 1
            took = time.monotonic() - started
            sys.stderr.write(f"\r\x1b[Kkeepui: {line} {took:.1f} s\n")
            sys.stderr.flush()

        self._stop = stop
        self._thread = threading.Thread(target=spin, name="keepui-spinner", daemon=True)
        self._thread.start()

    def end(self) -> None:
        """The step is over."""
        stop, thread = self._stop, self._thread
        self._stop = self._thread = None
        if stop is not None and thread is not None:
            stop.set()
            thread.join()


def _is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class BarReporter:
    """Shows a slow engine step as a line of a live rich progress display (writing to stderr
    beside it would garble the bar)."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar
        self._task: Any = None

    def begin(self, line: str) -> None:
        """A slow step starts: a line of its own in the display."""
        self._task = self._bar.add_task(line, total=None)

    def end(self) -> None:
        """The step is over: its line goes."""
        if self._task is not None:
            self._bar.remove_task(self._task)
            self._task = None


class PlainProgress:
    """Progress for stderr that is not a terminal (a log, a CI job): a line when a phase
    starts and ends, and at most one every `every` seconds between."""

    def __init__(self, every: float = 10.0) -> None:
        self._every = every
        self._last: dict[str, float] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        first = phase not in self._last
        if first or done >= total or now - self._last[phase] >= self._every:
            self._last[phase] = now
            sys.stderr.write(f"keepui: {phase} {done}/{total}\n")
            sys.stderr.flush()
