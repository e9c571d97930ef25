"""Run `python -m keepui ARGS` as a real process without paying its imports each time.

A test runs hundreds of keepui command lines, and each fresh interpreter spent 0.6-1 s (most
of the suite's CLI time) importing typer, rich, numpy and DuckDB before doing 20 ms of work.
This module is a small fork server: one process per test worker imports those once, and for
each command forks a child that takes the caller's stdin/stdout/stderr pipes (passed over a
Unix socket), environment, working directory and arguments, runs `keepui/__main__.py` as
`python -m keepui` would, and exits with the CLI's own code. The caller sees a real process:
its own pid, its own pipes, its exit status.

What a fork cannot show (what a fresh interpreter imports, its start-up time, signals from a
terminal) is tested with plain subprocesses; `KEEPUI_TEST_FORK=0` sends every command there.

Run as a script: `python zygote.py SOCKET` serves until its socket's peer (the test worker)
is gone; it is single-threaded, so that fork copies no lock another thread holds.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import signal
import socket
import sys
import traceback

# Before numpy loads: a pool of BLAS threads would not survive the fork (keepui sets the same).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

MAX_REQUEST = 4 << 20


def _recv_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    fds = array.array("i")
    chunks: list[bytes] = []
    while True:
        data, anc, _flags, _addr = conn.recvmsg(MAX_REQUEST, socket.CMSG_LEN(3 * fds.itemsize))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            break
        chunks.append(data)
        if data.endswith(b"\n"):
            break
    return json.loads(b"".join(chunks)), list(fds)


def _child(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: become `python -m keepui ARGS`; never returns."""
    import runpy

    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter's
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.argv = ["keepui", *[str(a) for a in list(request["argv"])]]  # type: ignore[call-overload]
        try:
            runpy.run_module("keepui", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if stop.code is not None and not isinstance(stop.code, int):
                sys.stderr.write(f"{stop.code}\n")
        except KeyboardInterrupt:
            code = 130
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def _preload() -> None:
    """Import every keepui module a command may import lazily, and what they import (torch
    stays out: it starts threads of its own, and only the real-model tests need it)."""
    import importlib
    import pkgutil

    for top in ("keepui_engine", "keepui"):
        package = importlib.import_module(top)
        for info in pkgutil.walk_packages(package.__path__, top + "."):
            if info.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # an optional extra that is not installed (mlx, PostgreSQL)
                continue
    import duckdb  # noqa: F401  (the store imports these when it opens)
    import numpy  # noqa: F401
    import usearch.index  # noqa: F401

    from keepui.cli.app import command

    command()  # the Click command tree, built once (the server does the same)
    if "torch" in sys.modules:
        raise RuntimeError("tests/zygote.py: preloading keepui imported torch")


def serve(path: str) -> None:
    """Accept one request at a time until the test worker's end of the pipe on stdin closes."""
    import selectors

    _preload()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    select = selectors.DefaultSelector()
    select.register(listener, selectors.EVENT_READ)
    select.register(sys.stdin, selectors.EVENT_READ)
    while True:
        ready = [key.fileobj for key, _ in select.select()]
        if sys.stdin in ready:
            return  # the worker is gone (its pipe to our stdin closed)
        conn, _ = listener.accept()
        with conn:
            request, fds = _recv_request(conn)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                listener.close()
                conn.close()
                _child(request, fds)
            for fd in fds:
                os.close(fd)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):  # the caller gave up (its timeout) and closed
                conn.sendall(json.dumps({"code": code}).encode() + b"\n")


if __name__ == "__main__":
    serve(sys.argv[1])
