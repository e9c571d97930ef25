"""The server's side of the CLI's fast path (keepui.cli.thin): run a client's command line in
this process and hand back what it printed and its exit code.

Each request runs in its own thread; what that thread writes to sys.stdout and sys.stderr is
routed to the request's buffers (`install_routing` puts thread-aware streams in their place
once), everything else still reaches the real streams (the server's log). The command's
Workbench reaches the store through this process's own socket, like any client.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_local = threading.local()


class _Routed(io.TextIOBase):
    """sys.stdout or sys.stderr: the calling request's buffer, else the real stream."""

    def __init__(self, real: TextIO, name: str) -> None:
        self._real = real
        self._name = name

    def _target(self) -> tuple[TextIO, bool | None]:
        sinks = getattr(_local, "sinks", None)
        if sinks is None:
            return self._real, None
        buffer, tty = sinks[self._name]
        return buffer, tty

    def write(self, text: str) -> int:  # type: ignore[override]
        return self._target()[0].write(text)

    def flush(self) -> None:
        self._target()[0].flush()

    def isatty(self) -> bool:
        target, tty = self._target()
        return bool(tty) if tty is not None else target.isatty()

    def fileno(self) -> int:
        if getattr(_local, "sinks", None) is not None:
            raise io.UnsupportedOperation("a client's stream has no file descriptor here")
        return self._real.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def install_routing() -> None:
    """Route each request thread's stdout and stderr to its own buffers (once per process)."""
    if not isinstance(sys.stdout, _Routed):
        sys.stdout = _Routed(sys.stdout, "stdout")
    if not isinstance(sys.stderr, _Routed):
        sys.stderr = _Routed(sys.stderr, "stderr")


@contextmanager
def _captured(tty: dict[str, bool]) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    _local.sinks = {
        "stdout": (out, bool(tty.get("stdout"))),
        "stderr": (err, bool(tty.get("stderr"))),
    }
    try:
        yield out, err
    finally:
        _local.sinks = None


def run_command(args: dict[str, Any], ready: Callable[[], None]) -> dict[str, Any]:
    """The `__cli__` request: run `argv` as `keepui` would; its stdout, stderr and code."""
    from keepui.cli import run_args

    argv = [str(a) for a in args.get("argv") or []]
    with _captured(dict(args.get("tty") or {})) as (out, err):
        code = run_args(argv, remote=True)
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "code": code}
