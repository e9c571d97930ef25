"""The store socket: a long-lived owner process serves other keepui processes over a Unix socket."""

from __future__ import annotations

import hashlib
import json
import os
import select
import socket
import socketserver
import stat
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keepui_engine.errors import KeepuiError, StoreError, error_from_dict

SOCKET_NAME = "keepui.sock"
MAX_LINE = 256 * 1024 * 1024


def socket_path(store: Path) -> Path:
    """Where the store's socket lives: in the store, or, when that path is too long for a
    Unix socket, in a directory only this user can write (see `private_run_dir`)."""
    path = store / SOCKET_NAME
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha256(str(store).encode()).hexdigest()[:16]
    return private_run_dir() / f"{digest}.sock"


def private_run_dir() -> Path:
    """A directory for sockets that only this user can create files in: `$XDG_RUNTIME_DIR/
    keepui`, else `~/.cache/keepui/run`, else (when that path is too long for a socket)
    `/tmp/keepui-UID`; created 0700, and refused unless it is ours, not a symlink, and closed
    to everyone else (another user could otherwise create our socket first and read what we
    send it)."""
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        candidates.append(Path(runtime) / "keepui")
    candidates.append(Path.home() / ".cache" / "keepui" / "run")
    candidates.append(Path(tempfile.gettempdir()) / f"keepui-{os.getuid()}")
    for path in candidates:
        if len(str(path)) < 80:
            return _checked_private_dir(path)
    return _checked_private_dir(candidates[-1])


def _checked_private_dir(path: Path) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise StoreError(
            f"cannot create the socket directory {path}: {exc}. Use a shorter --store path."
        ) from exc
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StoreError(f"{path} is not a directory: refusing to put the store socket there.")
    if info.st_uid != os.getuid():
        raise StoreError(
            f"{path} belongs to user {info.st_uid}, not to you: another user may be trying to "
            "intercept keepui's socket. Remove it (as its owner or root), or use a shorter "
            "--store path."
        )
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def connect(store: Path, timeout: float = 600.0) -> socket.socket | None:
    """A connection to the store's server, or None when no server answers.

    Raises:
        StoreError: The socket, or the process behind it, belongs to another user: nothing
            is sent to it.
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
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def _impostor(path: Path, why: str) -> StoreError:
    return StoreError(
        f"refusing to talk to {path}: {why}, not to you, so it is not your keepui server and "
        "nothing was sent to it. Remove that file (as its owner or root) and run the command "
        "again."
    )


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
        uid = peer_uid(self.request)
        if uid is not None and uid not in (os.getuid(), 0):
            return  # another user's process: it gets nothing (the socket is 0600 anyway)
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
