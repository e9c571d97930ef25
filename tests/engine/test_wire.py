"""The fast path's side of the owner's socket (keepui_engine.core.wire): frames, heartbeats,
peers."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from keepui_engine.core import wire


class _Chunks:
    """A socket that hands out the given byte strings one recv at a time."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    def recv(self, _size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


def test_a_reply_after_heartbeats_and_split_across_reads_is_read_whole() -> None:
    data = wire.frame({"ok": True, "result": {"stdout": "x" * 70000, "code": 0}})
    sock = _Chunks(b" ", b"  ", data[:3], data[3:9], data[9:40000], data[40000:])
    assert wire._read_reply(sock) == {"ok": True, "result": {"stdout": "x" * 70000, "code": 0}}


def test_a_reply_in_another_protocol_or_cut_short_is_refused() -> None:
    with pytest.raises(ValueError, match="another protocol"):
        wire._read_reply(_Chunks(b' {"ok": true}\n'))
    with pytest.raises(EOFError):
        wire._read_reply(_Chunks(wire.frame({"ok": True})[:-2]))
    with pytest.raises(ValueError, match="not a reply"):
        wire._read_reply(_Chunks(wire.frame([1, 2])))


def test_peer_names_the_process_at_the_other_end() -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert wire.peer(a) in ((os.getpid(), os.getuid()), None)


def test_ask_without_a_server_is_none_and_sends_nothing(tmp_path: Path) -> None:
    assert wire.ask(str(tmp_path), "__hello__", {}) is None
    (tmp_path / wire.SOCKET_NAME).write_text("not a socket")  # a stale file
    assert wire.ask(str(tmp_path), "__hello__", {}) is None


def test_ask_sends_a_frame_with_what_it_expects_and_reads_the_answer(tmp_path: Path) -> None:
    path = wire.socket_path(str(tmp_path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    seen: dict[str, object] = {}

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            head = conn.recv(5, socket.MSG_WAITALL)
            size = int.from_bytes(head[1:], "big")
            import marshal

            seen.update(marshal.loads(conn.recv(size, socket.MSG_WAITALL)))
            conn.sendall(b"   " + wire.frame({"ok": True, "result": {"code": 3}}))

    thread = threading.Thread(target=answer)
    thread.start()
    try:
        reply = wire.ask(str(tmp_path), "__cli__", {"argv": ["get", "a"]}, timeout=10)
    finally:
        thread.join(10)
        listener.close()
    assert reply == {"ok": True, "result": {"code": 3}}
    assert seen["op"] == "__cli__" and seen["args"] == {"argv": ["get", "a"]}
    assert seen["expect"] == wire.expect(str(tmp_path))
