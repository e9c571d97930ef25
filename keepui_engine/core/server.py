"""The store socket: a long-lived owner process serves other keepui processes over a Unix socket
(what is said on it: see `liveness`)."""

from __future__ import annotations

import json
import os
import select
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from keepui_engine.core import wire
from keepui_engine.core.errors import KeepuiError, StoreError
from keepui_engine.core.liveness import (
    ANSWER_TIMEOUT_S,
    MAX_LINE,
    Beat,
    NotAnswering,
    Retry,
    call,
    gone,
    peer,
)

__all__ = [
    "ANSWER_TIMEOUT_S",
    "NotAnswering",
    "Retry",
    "StoreServer",
    "call",
    "connect",
    "is_up",
    "peer_uid",
    "private_run_dir",
    "socket_path",
]
SOCKET_NAME = wire.SOCKET_NAME
STOP_POLL_S = 0.05  # how often the serving thread looks whether `stop` was asked (it waits)


class _Gone(Exception):
    """The client closed its connection before its request ran: the request is dropped."""


def socket_path(store: Path) -> Path:
    """Where the store's socket lives (see `wire.socket_path`)."""
    return Path(wire.socket_path(store))


def private_run_dir() -> Path:
    """The private directory for sockets of long store paths (see `wire.private_run_dir`)."""
    return Path(wire.private_run_dir())


def connect(store: Path, timeout: float = ANSWER_TIMEOUT_S) -> socket.socket | None:
    """A connection to the store's server, or None when no server answers.

    Raises:
        StoreError: The socket, or the process behind it, belongs to another user: nothing
            is sent to it. Or a server holds the socket but accepts no connection within
            `timeout` seconds (it is stopped or hung).
    """
    path = socket_path(store)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if info.st_uid != os.getuid():
        raise _impostor(path, f"the socket file belongs to user {info.st_uid}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except TimeoutError as exc:
        sock.close()
        raise NotAnswering(
            f"the keepui server for {store} accepted no connection for {timeout:g} s: it is "
            "stopped (kill -STOP, Ctrl+Z) or hung. Nothing was sent to it. Resume it (kill "
            "-CONT) or stop it, then run the command again; [server] answer_timeout_s in "
            "keepui.toml sets how long to wait.",
            "Server not answering",
        ) from exc
    except OSError:
        sock.close()
        return None
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        sock.close()
        raise _impostor(path, f"the process serving it runs as user {uid}")
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket (Linux's SO_PEERCRED);
    None where the platform cannot tell."""
    creds = peer(sock)
    return None if creds is None else creds[1]


def _impostor(path: Path, why: str) -> StoreError:
    return StoreError(
        f"refusing to talk to {path}: {why}, not to you, so it is not your keepui server and "
        "nothing was sent to it. Remove that file (as its owner or root) and run the command "
        "again."
    )


def is_up(store: Path) -> bool:
    """Whether a server holds the store's socket (a stale socket file does not count; a
    server too busy or stopped to accept within a second does)."""
    try:
        sock = connect(store, timeout=1.0)
    except NotAnswering:
        return True
    if sock is None:
        return False
    sock.close()
    return True


class _Handler(socketserver.StreamRequestHandler):
    timeout = 60

    def handle(self) -> None:
        uid = peer_uid(self.request)
        if uid is not None and uid not in (os.getuid(), 0):
            return  # another user's process: it gets nothing (the socket is 0600 anyway)
        # A JSON line, or a marshal frame from the CLI's fast path (keepui_engine.core.wire).
        framed = self.rfile.peek(1)[:1] == wire.FRAME  # type: ignore[attr-defined]
        encode = wire.frame if framed else _json_line
        server: StoreServer = self.server.owner  # type: ignore[attr-defined]
        op = "?"
        try:
            request = (
                _read_frame(self.rfile)
                if framed
                else json.loads(self.rfile.readline(MAX_LINE) or b"null")
            )
            if request is None:
                return
            op = str(request["op"])
            every = float(request.get("beat") or ANSWER_TIMEOUT_S / 4)
        except (ValueError, KeyError, TypeError, EOFError) as exc:
            self.wfile.write(encode(_failure(exc)))
            return
        quick = server.quick(op, request.get("expect"))
        if quick is not None:  # about the server itself, or refused: nothing runs
            self.wfile.write(encode(quick))
            return
        with server.busy(), Beat(self.request, every) as beat:

            def ready() -> None:
                if server.stopping:
                    raise Retry("stopping")
                if gone(self.request):
                    raise _Gone
                beat.running()

            try:
                result = server.dispatch(op, dict(request.get("args") or {}), ready)
                reply: dict[str, Any] = {"ok": True, "result": result}
            except _Gone:
                server.note(f"keepui: dropped a {op} request: its client gave up before it ran")
                return
            except Retry:
                reply = {"ok": False, "retry": True}
            except KeepuiError as exc:
                reply = {"ok": False, "error": exc.to_dict()}
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
                reply = _failure(exc)
            beat.finish(encode(reply))


def _json_line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _read_frame(stream: Any) -> Any:
    """A marshal frame's payload (see keepui_engine.core.wire), or None at end of stream."""
    import marshal

    head = stream.read(5)
    if not head:
        return None
    size = int.from_bytes(head[1:5], "big")
    if len(head) < 5 or size > wire.MAX_FRAME:
        raise ValueError("a malformed request frame")
    payload = stream.read(size)
    if len(payload) < size:
        raise EOFError("the request frame ended early")
    return marshal.loads(payload)


def _failure(exc: Exception) -> dict[str, Any]:
    return {
        "ok": False,
        "error": {
            "type": "StoreError",
            "title": "Server error",
            "message": f"{type(exc).__name__}: {exc}",
        },
    }


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    # Handler threads are joined on close, so the store is never closed under a request.
    daemon_threads = False
    block_on_close = True
    request_queue_size = 64  # clients queue in the kernel while the server accepts


class StoreServer:
    """Serves one store's operations to other processes, each request in its own thread.

    Args:
        store: The store directory (its lock must already be held by this process).
        dispatch: Callable(op, args, ready) -> JSON-ready result. It takes the request's turn
            on the store, calls `ready()` (which raises when the request must not run after
            all: the server is stopping, or the client has gone), then runs it.
        on_note: Called with a line about what the server did on its own (the owner's log).
    """

    def __init__(
        self,
        store: Path,
        dispatch: Callable[[str, dict[str, Any], Callable[[], None]], Any],
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        self.path = socket_path(store)
        self._dispatch = dispatch
        self._on_note = on_note
        self.stopping = False
        # Operations of the front end that serves (e.g. a whole CLI command), by name:
        # Callable(args, ready) -> JSON-ready result; they take no turn on the store themselves.
        self.front: dict[str, Callable[[dict[str, Any], Callable[[], None]], Any]] = {}
        # What a request's `expect` must match (see `wire.expect`), and what `__hello__` adds.
        self.stamp: dict[str, str] = {}
        self.about: Callable[[], dict[str, Any]] = dict
        self.stop_asked = threading.Event()  # a client sent `__stop__`
        self._count = threading.Lock()
        self.in_flight = 0
        self.requests = 0
        self.last_active = time.monotonic()
        self.path.unlink(missing_ok=True)
        self._server = _UnixServer(str(self.path), _Handler)
        os.chmod(self.path, 0o600)
        self._server.owner = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    def dispatch(self, op: str, args: dict[str, Any], ready: Callable[[], None]) -> Any:
        """Run one request in its turn (see the class docstring)."""
        if self.stopping:
            raise Retry("stopping")
        if op in self.front:
            ready()
            return self.front[op](args, ready)
        return self._dispatch(op, args, ready)

    def quick(self, op: str, expected: Any) -> dict[str, Any] | None:
        """The answer to a request that runs nothing: `__hello__`, `__stop__`, or a refusal
        because the client expects another server (`stale`); None for every other request."""
        if op == "__hello__":
            return {"ok": True, "result": self.hello()}
        if op == "__stop__":
            self.stop_asked.set()
            return {"ok": True, "result": {"pid": os.getpid(), "state": "stopping"}}
        if isinstance(expected, dict) and self.stamp:
            stale = {
                k: {"client": v, "server": self.stamp.get(k)}
                for k, v in expected.items()
                if k in self.stamp and self.stamp[k] != v
            }
            if stale:
                return {"ok": False, "stale": stale, "pid": os.getpid()}
        return None

    def hello(self) -> dict[str, Any]:
        """What this server says about itself."""
        with self._count:
            busy, count, idle = self.in_flight, self.requests, time.monotonic() - self.last_active
        return {
            "pid": os.getpid(),
            "build": self.stamp.get("build"),
            "in_flight": busy,
            "requests": count,
            "idle_s": 0.0 if busy else round(idle, 1),
            "ops": sorted(self.front),
            **self.about(),
        }

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Count a request in flight (the owner's idle clock stops while any runs)."""
        with self._count:
            self.in_flight += 1
            self.requests += 1
        try:
            yield
        finally:
            with self._count:
                self.in_flight -= 1
                self.last_active = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request ended; 0 while one runs."""
        with self._count:
            return 0.0 if self.in_flight else time.monotonic() - self.last_active

    def note(self, line: str) -> None:
        """Tell the owner's log."""
        if self._on_note is not None:
            self._on_note(line)

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": STOP_POLL_S},
            name="keepui-server",
            daemon=True,
        )
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in the calling thread until `stop`."""
        self._server.serve_forever()

    def stop(self) -> None:
        """Stop serving: finish the running requests, send the others back to retry."""
        self.path.unlink(missing_ok=True)  # new clients go straight to the store lock
        self.stopping = True  # a request not yet running gets "retry" when its turn comes
        if self._thread is not None:
            self._server.shutdown()
        while select.select([self._server.socket], [], [], 0)[0]:
            self._server.handle_request()  # connections already queued get "retry"
        self._server.server_close()  # joins every handler thread
