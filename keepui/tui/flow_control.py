"""FlowControl and TickBatcher: step mode, cancel and tick batching of one flow run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keepui_engine import FlowTick

TICK_BATCH_S = 0.05
"""Most often a running flow posts its ticks (STYLE 4.3: at most every 50-100 ms)."""
CANCEL_POLL_S = 0.1
"""How often a paused gate checks whether Textual cancelled its worker (app exit)."""


class FlowControl:
    """What the UI thread tells a running flow: pause before each tick, go on, or stop.

    The worker thread calls `gate` before each tick (it is `Workbench.run_flow`'s gate). In
    step mode the gate blocks until the UI calls `next`, `run_on` or `cancel`; `cancel` makes
    every later gate return False, so the flow ends `stopped` (`cancelled`) and the thread
    returns. `finished` is set when the worker is done with the run, however it ended.

    Args:
        step: Start in step mode (pause before the first tick).
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(self, *, step: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.step = step
        self._clock = clock
        self.cancelled = False
        self.paused_s = 0.0
        """Seconds the flow waited at paused gates (left out of the time it took)."""
        self.finished = threading.Event()
        self._go = threading.Event()

    def gate(self, pause: Callable[[], None], is_cancelled: Callable[[], bool]) -> bool:
        """Before a tick (worker thread): True to run it, False to stop the flow.

        Args:
            pause: Called once when the gate is about to block (it tells the UI).
            is_cancelled: Whether Textual cancelled the worker (the app is exiting).
        """
        if self.cancelled or is_cancelled():
            return False
        if not self.step:
            return True
        self._go.clear()
        pause()
        started = self._clock()
        try:
            while not self._go.wait(CANCEL_POLL_S):
                if is_cancelled():
                    return False
        finally:
            self.paused_s += self._clock() - started
        return not self.cancelled

    def next(self) -> None:
        """Run one more tick (a paused gate lets it through; the next one pauses again)."""
        self._go.set()

    def set_step(self, on: bool) -> None:
        """Turn step mode on (the next gate pauses) or off (a paused gate goes on)."""
        self.step = on
        if not on:
            self._go.set()

    def cancel(self) -> None:
        """Stop the flow before its next tick (a paused gate returns False at once)."""
        self.cancelled = True
        self._go.set()


class TickBatcher:
    """Collects the ticks of a run on the worker thread and posts them in batches.

    The first tick goes out at once; ticks that come within `interval` of the last post wait
    for the next tick or a `flush` (the gate flushes before it pauses, the worker at the end),
    so a fast flow posts a few messages, not one per tick, and no tick is dropped.

    Args:
        post: Posts one batch (a thread-safe `post_message`).
        interval: Least time between two posts, in seconds.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        post: Callable[[list[FlowTick]], object],
        interval: float = TICK_BATCH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._post = post
        self._interval = interval
        self._clock = clock
        self._pending: list[FlowTick] = []
        self._last = float("-inf")

    def add(self, tick: FlowTick) -> None:
        """Take one tick (the run's `on_tick`); post the batch when the interval has passed."""
        self._pending.append(tick)
        if self._clock() - self._last >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Post whatever is waiting."""
        if self._pending:
            ticks, self._pending = self._pending, []
            self._last = self._clock()
            self._post(ticks)
