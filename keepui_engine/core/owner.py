"""The store's owner process, as a client sees it: found, asked, started, replaced, stopped.

The first command that needs the model starts `keepui serve --auto` for its store in the
background (detached, logging to STORE/server.log); later commands talk to it over the store
socket. The CLI's fast path reaches a running one through `keepui_engine.core.wire` alone; this
module, light to import too (no numpy, DuckDB or model), starts, asks about and stops them.

A request carries what the client expects of its server (`wire.expect`): this keepui build
and this keepui.toml. A server that differs answers `stale` instead of running anything, and is
replaced, never used. Starting is serialised by a flock on STORE/server.start, so two
commands racing to start one start exactly one.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

# The light half (store and socket paths, builds, one framed request) is keepui_engine.core.wire.
from keepui_engine.core.wire import ANSWER_TIMEOUT_S, own_socket, peer, private_run_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

LOG_NAME = "server.log"
START_LOCK = "server.start"
LOG_KEEP_BYTES = 1 << 20  # a log over 1 MB is cut to its last half when a server starts
START_TIMEOUT_S = 90.0  # opening a damaged or huge store can take long; the log tells why
STOP_TIMEOUT_S = 20.0
# At most this many servers keepui started on its own run for one user at a time
# (`KEEPUI_MAX_SERVERS` overrides it): starting one more asks the longest idle of the others to
# stop (as Gradle caps its daemons); one that answered a request in the last 2 s is left be.
MAX_AUTO_SERVERS = 8
IDLE_BEFORE_TRIM_S = 2.0
# Where a command says that it starts a server (the CLI sets it to write to stderr).
say: Callable[[str], None] | None = None


# -- talking to it -----------------------------------------------------------------------------
class Stale(Exception):
    """The server is another keepui build or read another keepui.toml: it ran nothing."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(", ".join(sorted(reply.get("stale") or {})))
        self.reply = reply


def connect(store: str, timeout: float = ANSWER_TIMEOUT_S) -> socket.socket | None:
    """A connection to the store's server, or None when none answers (a stale socket file, a
    socket or a process of another user: those get nothing sent, the caller runs in-process,
    where `server.connect` reports them)."""
    path = own_socket(store)
    if path is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    creds = peer(sock)
    if creds is not None and creds[1] != os.getuid():
        sock.close()
        return None
    return sock


def request(
    sock: socket.socket,
    op: str,
    args: dict[str, Any],
    *,
    timeout: float = ANSWER_TIMEOUT_S,
) -> dict[str, Any]:
    """Send one request about the server itself (`__hello__`, `__stop__`: those need no
    `expect`) and return its reply as it is; the connection is closed after. The server sends
    whitespace while it works, so `timeout` bounds its silence, not the request.

    Raises:
        OSError: The connection failed or the server went silent (TimeoutError).
        ValueError: The answer is not JSON.
    """
    message: dict[str, Any] = {"op": op, "args": args, "beat": max(0.05, timeout / 4)}
    with sock:
        sock.settimeout(timeout)
        sock.sendall(json.dumps(message).encode() + b"\n")
        got = bytearray()
        while b"\n" not in got:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            got += chunk
    line = bytes(got).lstrip(b" \t").split(b"\n", 1)[0]
    if not line:
        raise ConnectionError("the keepui server closed the connection without an answer")
    reply: dict[str, Any] = json.loads(line)
    return reply


def hello(store: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """What the store's server says about itself (pid, build, model, idle time…), or None."""
    sock = connect(store, timeout)
    if sock is None:
        return None
    try:
        reply = request(sock, "__hello__", {}, timeout=timeout)
    except (OSError, ValueError):
        return None
    result = reply.get("result")
    return result if reply.get("ok") and isinstance(result, dict) else None


def is_up(store: str) -> bool:
    """Whether a server answers on the store's socket."""
    sock = connect(store, 1.0)
    if sock is None:
        return False
    sock.close()
    return True


# -- starting and stopping ---------------------------------------------------------------------
def ensure(store: str, say: Callable[[str], None] | None = None) -> bool:
    """Start the store's owner unless one answers; True once one does.

    Only one process starts it (a flock on STORE/server.start); the others wait for that
    one's socket. False when it could not start (its log says why: the caller runs the
    command in its own process, which reports the same failure the usual way).
    """
    if is_up(store):
        return True
    import fcntl
    from pathlib import Path

    from keepui_engine.core.private import make_private_dir

    try:
        make_private_dir(Path(store))
        fd = os.open(os.path.join(store, START_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False  # a read-only store: nobody can own it, the command reads in-process
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if is_up(store):
            return True
        from keepui_engine.core import notices

        line = (
            f"starting a server for {store} (it loads the embedding model once; later "
            "commands use it; log: server.log in the store)…"
        )
        if notices.reporter is None and say is not None:
            say(f"keepui: {line}")
        with notices.busy(line):
            return _spawn_and_wait(store)
    finally:
        os.close(fd)  # closing the descriptor lets go of the flock


def _spawn_and_wait(store: str) -> bool:
    import subprocess

    log_path = os.path.join(store, LOG_NAME)
    _trim(log_path)
    env = dict(os.environ)
    env.pop("KEEPUI_NO_SERVER", None)
    env["KEEPUI_STORE"] = store
    with open(log_path, "ab") as log:
        os.chmod(log_path, 0o600)
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "keepui", "serve", "--auto", "--store", store],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            env=env,
            start_new_session=True,  # not in the terminal's process group: Ctrl+C is ours
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    pause = 0.02
    while time.monotonic() < deadline:
        if is_up(store):
            return True
        if proc.poll() is not None:
            return is_up(store)  # it exited: another owner (a workbench) may have won
        time.sleep(pause)
        pause = min(pause * 1.5, 0.2)
    return False


def _trim(log_path: str) -> None:
    try:
        size = os.path.getsize(log_path)
        if size <= LOG_KEEP_BYTES:
            return
        with open(log_path, "rb") as f:
            f.seek(size - LOG_KEEP_BYTES // 2)
            tail = f.read()
        with open(log_path, "wb") as f:
            f.write(tail)
    except OSError:
        pass


def stop(store: str, timeout: float = STOP_TIMEOUT_S) -> dict[str, Any] | None:
    """Ask the store's server to stop and wait until its socket is gone; what it said about
    itself before (None when none ran). A server that does not stop in time gets SIGTERM."""
    info = hello(store)
    if info is None:
        return None
    sock = connect(store, 2.0)
    if sock is not None:
        import contextlib

        with contextlib.suppress(OSError, ValueError):
            request(sock, "__stop__", {}, timeout=2.0)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_up(store) and not alive(int(info.get("pid") or 0)):
            return info
        time.sleep(0.05)
    pid = int(info.get("pid") or 0)
    if pid and alive(pid):
        import signal

        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 5.0
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.05)
    return info


def alive(pid: int) -> bool:
    """Whether a process runs (a child of ours that has exited is reaped and does not)."""
    if pid <= 0:
        return False
    try:  # our own child that has exited is a zombie until reaped: reap it
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- the user's auto-started servers -------------------------------------------------------------
def _registry() -> str:
    path = os.path.join(private_run_dir(), "owners")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def register(store: str) -> None:
    """Record this process as an auto-started server of `store` (see `trim`)."""
    with open(os.path.join(_registry(), str(os.getpid())), "w", encoding="utf-8") as f:
        f.write(store)


def unregister() -> None:
    """Forget this process's record (when it stops)."""
    import contextlib

    with contextlib.suppress(OSError):
        os.unlink(os.path.join(_registry(), str(os.getpid())))


def max_servers() -> int:
    """How many auto-started servers may run at once (`KEEPUI_MAX_SERVERS`, else 8)."""
    raw = os.environ.get("KEEPUI_MAX_SERVERS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_AUTO_SERVERS


def trim(limit: int | None = None) -> list[str]:
    """Stop the longest-idle other auto-started servers while more than `limit` run; the
    stores whose servers were asked to stop (records of dead processes are dropped)."""
    limit = max_servers() if limit is None else limit
    registry = _registry()
    others: list[tuple[float, str]] = []
    mine = str(os.getpid())
    for name in os.listdir(registry):
        path = os.path.join(registry, name)
        try:
            with open(path, encoding="utf-8") as f:
                store = f.read().strip()
        except OSError:
            continue
        if not name.isdigit() or not alive(int(name)):
            import contextlib

            with contextlib.suppress(OSError):
                os.unlink(path)
            continue
        if name == mine:
            continue
        info = hello(store, timeout=1.0) or {}
        if str(info.get("pid")) == name:
            others.append((float(info.get("idle_s") or 0.0), store))
    stopped = []
    for idle, store in sorted(others, reverse=True)[: max(0, len(others) + 1 - limit)]:
        if idle < IDLE_BEFORE_TRIM_S:
            break  # busy ones are never stopped for a newcomer
        sock = connect(store, 1.0)
        if sock is not None:
            import contextlib

            with contextlib.suppress(OSError, ValueError):
                request(sock, "__stop__", {}, timeout=1.0)
                stopped.append(store)
    return stopped
