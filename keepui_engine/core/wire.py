"""The store's server as the CLI's fast path reaches it: where it is, what a request expects
of it, and one request over its socket, at the cost of a few milliseconds of imports.

A warm command's whole budget is 60 ms and the interpreter takes 25 of them, so this module
imports nothing a bare interpreter has not loaded already: `_socket` rather than `socket`
(which loads enum and selectors, 20 ms here), `marshal` rather than `json` (which loads re),
os.path rather than pathlib. Requests and replies go as frames: a NUL byte, a 4-byte length
and a marshal payload of plain values (the server also speaks JSON lines to everyone else;
marshal is safe here because the socket only takes this user's processes, as `ask` and the
server both check). `keepui_engine.core.owner` builds on it to start, replace and stop servers.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = "0.1.0"
SOCKET_NAME = "keepui.sock"
CONFIG_NAME = "keepui.toml"
ANSWER_TIMEOUT_S = 10.0
TRUE = ("1", "true", "yes", "on")
FRAME = b"\x00"  # first byte of a marshal frame (a JSON request starts with "{")
MAX_FRAME = 256 << 20


def no_server() -> bool:
    """Whether commands must run in this process (`KEEPUI_NO_SERVER=1` or `--no-server`)."""
    return os.environ.get("KEEPUI_NO_SERVER", "").strip().lower() in TRUE


def is_url(text: str) -> bool:
    """Whether a store argument is a PostgreSQL URL (those stores start no owner)."""
    return text.startswith(("postgresql://", "postgres://"))


def store_dir(store: str | os.PathLike[str] | None) -> str:
    """The store directory as `config.resolve_store` finds it (argument, $KEEPUI_STORE,
    ~/.keepui), made absolute with symlinks resolved."""
    raw = os.fspath(store) if store else os.environ.get("KEEPUI_STORE") or "~/.keepui"
    return os.path.realpath(os.path.expanduser(raw))


def store_exists(store: str) -> bool:
    """Whether a directory holds a keepui store (its keepui.toml or its database)."""
    return os.path.isfile(os.path.join(store, CONFIG_NAME)) or os.path.isfile(
        os.path.join(store, "keepui.duckdb")
    )


def socket_path(store: str | os.PathLike[str]) -> str:
    """Where the store's socket lives: in the store, or, when that path is too long for a
    Unix socket, in a directory only this user can write (see `private_run_dir`)."""
    path = os.path.join(os.fspath(store), SOCKET_NAME)
    if len(path) < 100:
        return path
    import hashlib

    digest = hashlib.sha256(os.fspath(store).encode()).hexdigest()[:16]
    return os.path.join(private_run_dir(), f"{digest}.sock")


def private_run_dir() -> str:
    """A directory for sockets that only this user can create files in: `$XDG_RUNTIME_DIR/
    keepui`, else `~/.cache/keepui/run`, else (when that path is too long for a socket)
    `/tmp/keepui-UID`; created 0700, and refused unless it is ours, not a symlink, and closed
    to everyone else (another user could otherwise create our socket first and read what we
    send it)."""
    import tempfile

    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        candidates.append(os.path.join(runtime, "keepui"))
    candidates.append(os.path.join(os.path.expanduser("~"), ".cache", "keepui", "run"))
    candidates.append(os.path.join(tempfile.gettempdir(), f"keepui-{os.getuid()}"))
    for path in candidates:
        if len(path) < 80:
            return _checked_private_dir(path)
    return _checked_private_dir(candidates[-1])


def _checked_private_dir(path: str) -> str:
    import stat

    from keepui_engine.core.errors import StoreError

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.makedirs(path, mode=0o700, exist_ok=True)
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


# -- what a client expects of its server --------------------------------------------------------
def build_id() -> str:
    """This keepui's build: its version and a checksum of its source files' sizes and times
    (an edited or reinstalled keepui is another build). `KEEPUI_BUILD` overrides it."""
    forced = os.environ.get("KEEPUI_BUILD")
    if forced:
        return forced
    import zlib

    here = os.path.dirname(os.path.abspath(__file__))
    seen: list[str] = []
    for top in (here, os.path.join(os.path.dirname(here), "keepui")):
        stack = [top]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue
            for entry in entries:
                if entry.name == "__pycache__":
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith((".py", ".tcss")):
                    st = entry.stat()
                    seen.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    seen.sort()
    return f"{VERSION}+{zlib.crc32(chr(10).join(seen).encode()):08x}"


def config_stamp(store: str) -> str:
    """keepui.toml as a server read it (its size and time): a changed file means a new server
    (another model, other limits)."""
    try:
        st = os.stat(os.path.join(store, CONFIG_NAME))
    except OSError:
        return "none"
    return f"{st.st_size}:{st.st_mtime_ns}"


def expect(store: str) -> dict[str, str]:
    """What a request to the store's server requires of it."""
    return {"build": build_id(), "config": config_stamp(store)}


# -- one request --------------------------------------------------------------------------------
def frame(message: Any) -> bytes:
    """A marshal frame: NUL, the payload's length (4 bytes, big-endian), the payload."""
    payload = marshal.dumps(message)
    return FRAME + len(payload).to_bytes(4, "big") + payload


def ask(
    store: str,
    op: str,
    args: dict[str, Any],
    *,
    timeout: float = ANSWER_TIMEOUT_S,
) -> dict[str, Any] | None:
    """Send one request (with what this client expects of its server) to the store's server;
    its reply (`ok`, `result` or `error`, `retry`, `stale`), or None when no server of this
    user answers (no socket, a stale one, another user's) or the exchange failed."""
    import _socket

    path = own_socket(store)
    if path is None:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        creds = peer(sock)
        if creds is not None and creds[1] != os.getuid():
            return None
        message = {"op": op, "args": args, "beat": max(0.05, timeout / 4), "expect": expect(store)}
        sock.sendall(frame(message))
        return _read_reply(sock)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        sock.close()


def own_socket(store: str) -> str | None:
    """The store's socket path when it exists and belongs to this user (nothing is ever sent
    to another user's socket)."""
    path = socket_path(store)
    try:
        return path if os.lstat(path).st_uid == os.getuid() else None
    except OSError:
        return None


def peer(sock: Any) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a Unix socket, where the platform tells
    (Linux's SO_PEERCRED)."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
    except OSError:
        return None
    pid = int.from_bytes(raw[0:4], sys.byteorder, signed=True)
    uid = int.from_bytes(raw[4:8], sys.byteorder, signed=True)
    return pid, uid


def _read_reply(sock: Any) -> dict[str, Any]:
    """The server's frame after the spaces it sends while it works (its heartbeat)."""
    got = bytearray()
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the keepui server closed the connection without an answer")
        got += chunk
        start = len(got) - len(got.lstrip(b" \t\n"))
        if start == len(got):
            got.clear()
            continue
        if got[start : start + 1] != FRAME:
            raise ValueError("the keepui server answered in another protocol")
        if len(got) - start >= 5:
            size = int.from_bytes(got[start + 1 : start + 5], "big")
            if size > MAX_FRAME:
                raise ValueError("the keepui server's answer is too large")
            while len(got) - start - 5 < size:
                more = sock.recv(max(1 << 16, size - (len(got) - start - 5)))
                if not more:
                    raise EOFError("the keepui server closed the connection mid-answer")
                got += more
            reply = marshal.loads(bytes(got[start + 5 : start + 5 + size]))
            if not isinstance(reply, dict):
                raise ValueError("the keepui server's answer is not a reply")
            return reply
