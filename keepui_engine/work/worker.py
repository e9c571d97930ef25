"""WorkerThread: drains the pending queue inside a long-lived process, one task at a time."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from keepui_engine.core.gate import Abandoned

Step = Callable[[str, list[str]], "dict[str, Any] | None"]
BACKGROUND_NICE = 10
"""How much lower the worker thread's CPU priority is than the owner's other threads."""


def lower_priority() -> None:
    """Give the calling thread a lower CPU priority (Linux, where each thread has its own
    nice value, and the threads it starts, such as the model's thread pool, inherit it): the
    owner's other threads (the TUI, requests) get the cores first while it computes."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError):  # a sandbox may refuse; the worker runs all the same
        me = threading.get_native_id()
        nice = os.getpriority(os.PRIO_PROCESS, me)
        os.setpriority(os.PRIO_PROCESS, me, min(nice + BACKGROUND_NICE, 19))


class WorkerThread(threading.Thread):
    """A daemon thread that runs queued tasks until stopped.

    Args:
        step: Runs one task for an owner id (given the owners still alive in this process)
            and returns what happened, or None when nothing is runnable.
        on_result: Called (in this thread) with each task's outcome; for event bridges.
        idle_s: How long to wait for a wake-up when the queue has nothing runnable.
    """

    def __init__(
        self,
        step: Step,
        on_result: Callable[[dict[str, Any]], None] | None = None,
        idle_s: float = 1.0,
    ) -> None:
        super().__init__(name="keepui-worker", daemon=True)
        self._step = step
        self._on_result = on_result
        self._idle_s = idle_s
        self.stop_event = threading.Event()
        self.wake_event = threading.Event()
        self.errors: list[str] = []

    @property
    def owner(self) -> str:
        """The claim owner id of this thread (`pid:thread-id`)."""
        import os

        return f"{os.getpid()}:{self.ident}"

    def wake(self) -> None:
        """Look at the queue now (after a put) instead of at the next idle tick."""
        self.wake_event.set()

    def request_stop(self) -> None:
        """Ask the thread to stop after its current task (or at the task's next checkpoint,
        once its owner closes the gate: see work.gate), without waiting for it."""
        self.stop_event.set()
        self.wake_event.set()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Ask the thread to stop (`request_stop`) and wait for it."""
        self.request_stop()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        lower_priority()
        while not self.stop_event.is_set():
            try:
                result = self._step(self.owner, [self.owner])
            except Abandoned:  # the owner closed: the task is back in the queue
                return
            except Exception as exc:  # noqa: BLE001 - the store is closing or broken: back off
                self.errors.append(f"{type(exc).__name__}: {exc}")
                result = None
            if result is not None:
                if self._on_result is not None:
                    self._on_result(result)
                continue
            self.wake_event.wait(self._idle_s)
            self.wake_event.clear()
