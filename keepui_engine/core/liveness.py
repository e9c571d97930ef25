"""The store socket's conversation: one request a connection, answered with signs of life.

The client sends a JSON line `{"op", "args", "beat"}`; the server answers with whitespace while
it works, then one JSON line. A space means "queued" (the server has the request and waits for
its turn on the store), a tab "running"; one comes at once and then every `beat` seconds, so a
client tells a busy server from a stopped one: it gives up when nothing at all arrives for its
answer timeout (`[server] answer_timeout_s`). Before it runs a request, the server checks that
its client is still there (`gone`), and drops the request otherwise, so what a client gave up
on before it started is never applied (see README, Architecture).
"""

from __future__ import annotations

import json
import select
import socket
import threading
from typing import Any

from keepui_engine.core.errors import StoreError, error_from_dict
from keepui_engine.core.owner import Stale
from keepui_engine.core.wire import peer

MAX_LINE = 256 * 1024 * 1024
ANSWER_TIMEOUT_S = 10.0
QUEUED, RUNNING = b" ", b"\t"
MIN_BEAT_S = 0.05


class Retry(Exception):
    """The server is stopping and did not run the request: send it elsewhere."""


class NotAnswering(StoreError):
    """A server holds the store's socket but does not answer (stopped or hung)."""


def call(
    sock: socket.socket,
    op: str,
    args: dict[str, Any],
    timeout: float = ANSWER_TIMEOUT_S,
    expected: dict[str, str] | None = None,
) -> Any:
    """Send one request and return the result (raising the server's error as-is).

    Args:
        sock: A connection from `connect` (closed when the call ends).
        op: The operation.
        args: Its JSON-ready arguments.
        timeout: Give up when the server sends nothing for this many seconds (it sends
            whitespace while it works, see the module docstring).

    Raises:
        StoreError: The server stopped answering, or closed the connection.
        Retry: The server is stopping and did not run the request.
        owner.Stale: The server is another build or read another keepui.toml (`expected`).
    """
    beat = max(MIN_BEAT_S, timeout / 4)
    creds = peer(sock)
    who = f" (pid {creds[0]})" if creds else ""
    started = False
    with sock:
        sock.settimeout(timeout)
        try:
            message = {"op": op, "args": args, "beat": beat}
            if expected is not None:
                message["expect"] = expected
            sock.sendall(json.dumps(message).encode() + b"\n")
            got = bytearray()
            while True:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                started = started or RUNNING in chunk
                got += chunk
                if b"\n" in chunk:
                    break
                if len(got) > MAX_LINE:
                    raise StoreError(
                        f"the keepui server's answer to {op} is over {MAX_LINE} bytes."
                    )
        except TimeoutError as exc:
            raise _silent(op, timeout, who, started) from exc
        except OSError as exc:
            raise StoreError(
                f"the keepui server for this store{who} stopped answering ({exc}). "
                "Run the command again."
            ) from exc
    if not got.strip():
        raise StoreError(
            f"the keepui server for this store{who} closed the connection without an "
            "answer. Run the command again."
        )
    reply = json.loads(got.split(b"\n", 1)[0])
    if reply.get("retry"):
        raise Retry("the server is stopping")
    if reply.get("stale"):
        raise Stale(reply)
    if not reply.get("ok"):
        raise error_from_dict(reply.get("error", {}))
    return reply.get("result")


def _silent(op: str, timeout: float, who: str, started: bool) -> NotAnswering:
    fate = (
        "It had already started your request, which may still be applied when the server "
        "resumes: check before you repeat it."
        if started
        else "It had not started your request, so it will drop it and never apply it."
    )
    pid = who.strip(" ()").removeprefix("pid ")
    resume = f"kill -CONT {pid}" if pid else "kill -CONT"
    verb = op.split("_")[0]
    return NotAnswering(
        f"the keepui server for this store{who} sent nothing for {timeout:g} s, asked to "
        f"{verb}: it is stopped (kill -STOP, Ctrl+Z) or hung. {fate} Resume it ({resume}) or "
        "stop it, then run the command again; [server] answer_timeout_s in keepui.toml sets "
        "how long to wait.",
        "Server not answering",
    )


def gone(sock: socket.socket) -> bool:
    """Whether the client has closed its end (it gave up): the request line is read, so
    anything readable now is the end of the stream."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        if not poller.poll(0):
            return False  # nothing to read: still connected, waiting for the answer
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Beat:
    """Whitespace to a client while its request waits and runs (see the module docstring)."""

    def __init__(self, sock: socket.socket, every: float) -> None:
        self._sock = sock
        self._every = max(MIN_BEAT_S, every)
        self._byte = QUEUED
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="keepui-beat", daemon=True)

    def __enter__(self) -> Beat:
        self.send()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def running(self) -> None:
        """The request's turn came: say so at once."""
        self._byte = RUNNING
        self.send()

    def send(self) -> None:
        """Say that the request is still queued, or running."""
        with self._lock:
            if not self._done.is_set():
                self._send(self._byte)

    def finish(self, data: bytes) -> None:
        """Send the answer: nothing follows it."""
        with self._lock:
            self._done.set()
            self._send(data)

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError:
            self._done.set()  # the client has gone: nothing more to tell it

    def _run(self) -> None:
        while not self._done.wait(self._every):
            self.send()
