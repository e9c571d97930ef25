"""The store socket: a long-lived owner process serves other keepui processes over a Unix socket."""

from __future__ import annotations

import hashlib
import json
import os
import select
import socket
import socketserver
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keepui_engine.errors import KeepuiError, StoreError, error_from_dict

SOCKET_NAME = "keepui.sock"
MAX_LINE = 256 * 1024 * 1024


def socket_path(store: Path) -> Path:
    """Where the store's socket lives (a short temp path when the store path is too long)."""
    path = store / SOCKET_NAME
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha256(str(store).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"keepui-{os.getuid()}-{digest}.sock"


def connect(store: Path, timeout: float = 600.0) -> socket.socket | None:
    """A connection to the store's server, or None when no server answers."""
    path = socket_path(store)
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


class Retry(Exception):
    """The server is stopping and did not run the request: send it elsewhere."""


def is_up(store: Path) -> bool:
    """Whether a server answers on the store's socket (a stale socket file does not count)."""
    sock = connect(store, timeout=1.0)
    if sock is None:
        return False
    sock.close()
    return True


def call(sock: socket.socket, op: str, args: dict[str, Any]) -> Any:
    """Send one request and return the result (raising the server's error as-is)."""
    with sock:
        try:
            sock.sendall(json.dumps({"op": op, "args": args}).encode() + b"\n")
            reader = sock.makefile("rb")
            line = reader.readline(MAX_LINE)
        except OSError as exc:
            raise StoreError(
                f"the keepui server for this store stopped answering ({exc}). "
                "Run the command again."
            ) from exc
    if not line:
        raise StoreError(
            "the keepui server for this store closed the connection without an "
            "answer. Run the command again."
        )
    reply = json.loads(line)
    if reply.get("retry"):
        raise Retry("the server is stopping")
    if not reply.get("ok"):
        raise error_from_dict(reply.get("error", {}))
    return reply.get("result")


class _Handler(socketserver.StreamRequestHandler):
    timeout = 60

    def handle(self) -> None:
        line = self.rfile.readline(MAX_LINE)
        if not line:
            return
        server: StoreServer = self.server.owner  # type: ignore[attr-defined]
        try:
            request = json.loads(line)
            result = server.dispatch(str(request["op"]), dict(request.get("args") or {}))
            reply: dict[str, Any] = {"ok": True, "result": result}
        except Retry:
            reply = {"ok": False, "retry": True}
        except KeepuiError as exc:
            reply = {"ok": False, "error": exc.to_dict()}
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
            reply = {
                "ok": False,
                "error": {
                    "type": "StoreError",
                    "title": "Server error",
                    "message": f"{type(exc).__name__}: {exc}",
                },
            }
        self.wfile.write(json.dumps(reply).encode() + b"\n")


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    # Handler threads are joined on close, so the store is never closed under a request.
    daemon_threads = False
    block_on_close = True


class StoreServer:
    """Serves one store's operations to other processes.

    Args:
        store: The store directory (its lock must already be held by this process).
        dispatch: Callable(op, args) -> JSON-ready result; runs requests one at a time.
    """

    def __init__(self, store: Path, dispatch: Callable[[str, dict[str, Any]], Any]) -> None:
        self.path = socket_path(store)
        self._dispatch = dispatch
        self._serial = threading.Lock()
        self._stopping = False
        self.path.unlink(missing_ok=True)
        self._server = _UnixServer(str(self.path), _Handler)
        os.chmod(self.path, 0o600)
        self._server.owner = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    def dispatch(self, op: str, args: dict[str, Any]) -> Any:
        """Run one request, serialised with every other request."""
        with self._serial:
            if self._stopping:
                raise Retry("stopping")
            return self._dispatch(op, args)

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="keepui-server", daemon=True
        )
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in the calling thread until `stop`."""
        self._server.serve_forever()

    def stop(self) -> None:
        """Stop serving: finish the running request, send queued ones back to retry."""
        self.path.unlink(missing_ok=True)  # new clients go straight to the store lock
        with self._serial:
            self._stopping = True
        if self._thread is not None:
            self._server.shutdown()
        while select.select([self._server.socket], [], [], 0)[0]:
            self._server.handle_request()  # connections already queued get "retry"
        self._server.server_close()  # joins every handler thread
