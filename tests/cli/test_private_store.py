"""A store nobody else can read or impersonate (issue 23, points 1 and 2): private modes
whatever the umask, the socket in a directory only its user can write, and a client that
checks who serves the socket before it sends anything.

The tests that need a second user run a process as `nobody` (uid 65534), which only root can
start; as another user they skip, and the peer check is tested by changing what the client
takes for its own uid instead."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store, run_cli

from keepui_engine import StoreError, open_workbench
from keepui_engine.core import server

NOBODY = 65534
as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="running a process as another user (nobody) needs root"
)


def _modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(os.stat(root).st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            out[str(path.relative_to(root))] = stat.S_IMODE(os.stat(path).st_mode)
    return out


def _as(uid: int) -> None:
    os.setgid(uid)
    os.setuid(uid)


def test_a_new_store_is_private_whatever_the_umask(tmp_path: Path) -> None:
    store = tmp_path / "fresh" / "store"
    env = {**os.environ, "KEEPUI_STORE": str(store)}
    for args in (
        ["put", "the vault passphrase is in the safe", "-i", "secret"],
        ["put", "a second note about the safe", "-i", "other"],
        ["export", str(tmp_path / "out.jsonl")],
    ):
        got = subprocess.run(
            [sys.executable, "-m", "keepui", *args],
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=lambda: os.umask(0o022),  # noqa: PLW1509 - the umask is the point
        )
        assert got.returncode == 0, got.stderr
    modes = _modes(store)
    assert modes["."] == 0o700
    assert {name: mode for name, mode in modes.items() if mode not in (0o600, 0o700)} == {}
    assert stat.S_IMODE(os.stat(tmp_path / "out.jsonl").st_mode) == 0o600


def test_an_embedding_program_gets_a_private_store_too(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "lib")
    os.chmod(store, 0o755)
    os.chmod(store / "keepui.toml", 0o644)
    old = os.umask(0o022)
    try:
        with open_workbench(store, own=True) as wb:
            wb.put("a note written from a library", id="lib")
    finally:
        os.umask(old)
    modes = _modes(store)
    assert modes["."] == 0o700 and modes["keepui.toml"] == 0o600
    assert modes["keepui.duckdb"] == 0o600


def test_files_beside_a_store_are_left_alone(tmp_path: Path) -> None:
    folder = make_fake_store(tmp_path / "docs")
    (folder / "report.md").write_text("mine")
    os.chmod(folder / "report.md", 0o644)
    os.chmod(folder, 0o755)
    with open_workbench(folder, own=True) as wb:
        wb.put("a note", id="n")
    assert stat.S_IMODE(os.stat(folder / "report.md").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755  # not keepui's alone
    assert stat.S_IMODE(os.stat(folder / "keepui.duckdb").st_mode) == 0o600


@as_root
def test_another_user_cannot_read_a_store(tmp_path: Path) -> None:
    shared = Path(tempfile.mkdtemp(prefix="keepui-shared-"))
    try:
        os.chmod(shared, 0o755)
        store = shared / "store"
        assert run_cli(store, "put", "the vault passphrase is 7-bright-otters").returncode == 0
        spy = subprocess.run(
            ["cat", str(store / "keepui.duckdb")],
            capture_output=True,
            preexec_fn=lambda: _as(NOBODY),
        )
        assert spy.returncode != 0 and b"otters" not in spy.stdout
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=False)


@pytest.fixture
def long_store(tmp_path: Path) -> Path:
    """A store whose path is too long for a Unix socket inside it."""
    return make_fake_store(tmp_path / ("x" * 60) / ("y" * 60) / "store")


def test_a_long_store_path_puts_its_socket_in_a_private_run_dir(long_store: Path) -> None:
    path = server.socket_path(long_store)
    assert path.parent == Path.home() / ".cache" / "keepui" / "run"
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert not str(path).startswith(tempfile.gettempdir() + "/keepui-")
    with open_workbench(long_store, own=True) as owner:
        owner.serve(worker=False)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        got = run_cli(long_store, "put", "through the owner", "-i", "via")
        assert got.returncode == 0, got.stderr
        assert owner.get("via").text == "through the owner"


@as_root
def test_a_run_dir_made_by_another_user_is_refused(long_store: Path) -> None:
    run = Path.home() / ".cache" / "keepui" / "run"
    run.mkdir(parents=True)
    os.chown(run, NOBODY, NOBODY)
    with pytest.raises(StoreError, match="belongs to user 65534"):
        server.socket_path(long_store)
    got = run_cli(long_store, "put", "secret text", "-i", "victim")
    assert got.returncode == 2 and "belongs to user 65534" in got.stderr
    assert "Traceback" not in got.stderr


@pytest.fixture
def open_store() -> Iterator[Path]:
    """A fake-embedder store in a folder any user may write (as a shared folder can be)."""
    shared = Path(tempfile.mkdtemp(prefix="keepui-open-"))
    os.chmod(shared, 0o777)
    store = make_fake_store(shared / "store")
    os.chmod(store, 0o777)
    yield store
    subprocess.run(["rm", "-rf", str(shared)], check=False)


def _listen_as(uid: int, path: Path, loot: Path) -> int:
    """Fork a process that becomes `uid`, serves a Unix socket at `path` and writes what it
    receives to `loot`; return its pid once it listens (a fork needs no interpreter that the
    other user may run)."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            _as(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(path))
            s.listen(4)
            os.write(ready_w, b"r")
            conn, _ = s.accept()
            conn.settimeout(30)
            data = conn.recv(1 << 20)
            loot.write_bytes(data)
            conn.sendall(
                b'{"ok": true, "result": {"id": "v", "version": 1, "action": "created"}}\n'
            )
        finally:
            os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"r"
    os.close(ready_r)
    return pid


@as_root
def test_a_socket_another_user_created_gets_nothing(open_store: Path) -> None:
    sock = server.socket_path(open_store)
    loot = open_store.parent / "loot"
    pid = _listen_as(NOBODY, sock, loot)
    try:
        got = run_cli(open_store, "put", "the vault passphrase is 7-bright-otters", "-i", "v")
        assert got.returncode == 2, got.stderr
        assert "refusing to talk to" in got.stderr and "nothing was sent" in got.stderr
        assert not loot.exists() or b"otters" not in loot.read_bytes()
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_the_client_checks_the_peer_before_sending(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As any user: a real server of ours, and a client that takes itself for another user,
    must refuse it on the peer credentials (or the file owner) and send nothing."""
    with open_workbench(store_dir, own=True) as owner:
        owner.serve(worker=False)
        conn = server.connect(store_dir, timeout=5)
        assert conn is not None and server.peer_uid(conn) in (os.getuid(), None)
        conn.close()
        real = os.getuid()
        monkeypatch.setattr(server.os, "getuid", lambda: real + 1)
        with pytest.raises(StoreError, match="refusing to talk to"):
            server.connect(store_dir, timeout=5)


def test_peer_uid_reads_the_other_end() -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert server.peer_uid(a) in (os.getuid(), None)
