"""Test helpers importable from every test module (tests/ is on pythonpath)."""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from keepui_engine.core.config import DEFAULT_TOML

FAKE_TOML = DEFAULT_TOML.replace('provider = "sentence-transformers"', 'provider = "fake"')


def make_fake_store(path: Path, **overrides: object) -> Path:
    """Create a store directory whose keepui.toml selects the fake embedder."""
    path.mkdir(parents=True, exist_ok=True)
    text = FAKE_TOML
    for key, value in overrides.items():
        rendered = str(value).lower() if isinstance(value, bool) else str(value)
        lines = [
            f"{key} = {rendered}" if line.startswith(f"{key} =") else line
            for line in text.splitlines()
        ]
        text = "\n".join(lines) + "\n"
    (path / "keepui.toml").write_text(text)
    return path


def break_summarizer(store: Path, *, port: int = 9, timeout_s: int = 1, **queue: int) -> None:
    """Point the store's summarizer at a local port: by default a closed one (every summary
    fails fast); a test's own listener on `port` can hold a request instead."""
    toml = (store / "keepui.toml").read_text()
    toml = toml.replace('provider = "extractive"', 'provider = "openai-compatible"')
    toml = toml.replace(
        '# base_url = "http://127.0.0.1:11434/v1"', f'base_url = "http://127.0.0.1:{port}/v1"'
    )
    toml = toml.replace('# model = "llama3.2"', 'model = "m"').replace(
        "timeout_s = 60", f"timeout_s = {timeout_s}"
    )
    for key, value in queue.items():
        toml = "\n".join(
            f"{key} = {value}" if line.startswith(f"{key} =") else line
            for line in toml.splitlines()
        )
    (store / "keepui.toml").write_text(toml + "\n")


def run_cli(
    store: Path, *args: str, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m keepui ARGS --store STORE` as a real process, output captured as text
    (forked from the worker's fork server unless KEEPUI_TEST_FORK=0: see tests/zygote.py)."""
    if fork_enabled():
        return forked([*args, "--store", str(store)], stdin=stdin, timeout=timeout)
    return subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--store", str(store)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def grey_png(width: int, height: int, exif_after_pixels: bytes | None = None) -> bytes:
    """A grey PNG of zeros, compressed row by row (tiny on disk, huge once decoded)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    pack = zlib.compressobj(1)
    row = bytes(width + 1)
    idat = b"".join(pack.compress(row) for _ in range(height)) + pack.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    tail = chunk(b"eXIf", exif_after_pixels) if exif_after_pixels else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", idat)
        + tail
        + chunk(b"IEND", b"")
    )


WAIT_S = 60.0  # generous: a loaded machine is slow, but never this slow
AUTH_V1 = " ".join(f"Sentence {i} tells how the auth service checks a token." for i in range(40))
AUTH_V2 = AUTH_V1 + " A new closing sentence says who rotates the signing keys."
AUTH_SUMMARY = "The auth service checks tokens."


class BlockingSummarizer:
    """A summarizer whose every call waits until the test lets it go (`release`)."""

    name = "blocking"
    uses_context = False

    def __init__(self) -> None:
        import threading

        self.entered = threading.Event()
        self.release = threading.Event()

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        self.entered.set()
        assert self.release.wait(WAIT_S), "the test never let the summary finish"
        return AUTH_SUMMARY


class _ForkServer:
    """The test worker's `tests/zygote.py` process, started on first use."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.path = ""

    def socket_path(self) -> str:
        if self.proc is not None and self.proc.poll() is None:
            return self.path
        import tempfile

        self.path = os.path.join(tempfile.mkdtemp(prefix="kz-"), "s")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("zygote.py")), self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline() != b"ready\n":
            raise RuntimeError("tests/zygote.py did not start")
        return self.path


_FORK = _ForkServer()


def forked(
    argv: list[str],
    *,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`python -m keepui ARGV` as a process forked from this worker's fork server (see
    tests/zygote.py): its own pid, pipes, environment and exit code, without the imports."""
    import json
    import selectors
    import socket
    import time

    pipes = [os.pipe() for _ in range(3)]  # (read, write) for stdin, stdout, stderr
    theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
    request = {
        "argv": argv,
        "env": dict(os.environ if env is None else env),
        "cwd": str(cwd or os.getcwd()),
    }
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(_FORK.socket_path())
        conn.sendmsg([json.dumps(request).encode() + b"\n"], [_fds(theirs)])
    finally:
        for fd in theirs:
            os.close(fd)
    to_child, out_fd, err_fd = pipes[0][1], pipes[1][0], pipes[2][0]
    data = (stdin or "").encode()
    out, err, replies = bytearray(), bytearray(), bytearray()
    select = selectors.DefaultSelector()
    os.set_blocking(to_child, False)
    if data:
        select.register(to_child, selectors.EVENT_WRITE)
    else:
        os.close(to_child)
    select.register(out_fd, selectors.EVENT_READ, out)
    select.register(err_fd, selectors.EVENT_READ, err)
    select.register(conn, selectors.EVENT_READ, replies)
    deadline = time.monotonic() + timeout
    pid = code = None
    try:
        while code is None:
            left = deadline - time.monotonic()
            if left <= 0:
                if pid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(argv, timeout, bytes(out), bytes(err))
            for key, _ in select.select(min(left, 1.0)):
                fd = key.fd
                if fd == to_child:
                    try:
                        sent = os.write(to_child, data[:65536])
                    except BrokenPipeError:
                        sent = len(data)
                    data = data[sent:]
                    if not data:
                        select.unregister(to_child)
                        os.close(to_child)
                    continue
                chunk = conn.recv(65536) if fd == conn.fileno() else os.read(fd, 65536)
                if not chunk:
                    select.unregister(fd)
                    if fd == conn.fileno():
                        raise RuntimeError("tests/zygote.py closed before the command ended")
                    continue
                key.data.extend(chunk)
                while b"\n" in replies:
                    line, _, rest = bytes(replies).partition(b"\n")
                    replies[:] = rest
                    reply = json.loads(line)
                    pid = reply.get("pid", pid)
                    code = reply.get("code", code)
        for fd in (out_fd, err_fd):  # the child has exited: drain what is left in its pipes
            with contextlib.suppress(KeyError):
                select.get_key(fd)
                while chunk := os.read(fd, 65536):
                    (out if fd == out_fd else err).extend(chunk)
    finally:
        select.close()
        conn.close()
        for fd in (out_fd, err_fd):
            os.close(fd)
        if data:
            with contextlib.suppress(OSError):
                os.close(to_child)
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "keepui", *argv], code, _text(out), _text(err)
    )


def _fds(fds: list[int]) -> tuple[int, int, bytes]:
    import array
    import socket

    return (socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())


def _text(data: bytes | bytearray) -> str:
    """As subprocess's text mode reads it (universal newlines)."""
    return bytes(data).decode().replace("\r\n", "\n").replace("\r", "\n")


def fork_enabled() -> bool:
    return os.environ.get("KEEPUI_TEST_FORK", "1") != "0"
