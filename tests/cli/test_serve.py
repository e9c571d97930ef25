"""`keepui serve`: one owner per store, clients over the socket, stale sockets ignored."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from keepui_engine import open_workbench
from keepui_engine.core.server import is_up, socket_path


def keepui(*args: str) -> list[str]:
    return [sys.executable, "-m", "keepui", *args]


def wait_for(condition, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_stale_socket_file_is_ignored(store_dir: Path) -> None:
    path = socket_path(store_dir)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()
    assert path.exists() and not is_up(store_dir)
    with open_workbench(store_dir) as wb:
        assert wb.put("still works", id="s").action == "created"


def test_serve_answers_clients_and_refuses_a_second_owner(store_dir: Path) -> None:
    proc = subprocess.Popen(
        keepui("serve", "--store", str(store_dir)), stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: is_up(store_dir) or proc.poll() is not None)
        assert proc.poll() is None
        put = subprocess.run(
            keepui("put", "served note", "-i", "n", "--store", str(store_dir)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert put.returncode == 0, put.stderr
        found = subprocess.run(
            keepui("find", "served", "--json", "--store", str(store_dir)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(found.stdout)["hits"][0]["id"] == "n"
        second = subprocess.run(
            keepui("serve", "--store", str(store_dir)), capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 2 and "already" in second.stderr
        missing = subprocess.run(
            keepui("get", "nope", "--store", str(store_dir)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert missing.returncode == 2 and "nope" in missing.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert not socket_path(store_dir).exists()
    with open_workbench(store_dir) as wb:
        assert wb.get("n").text == "served note"


def test_owner_in_process_serves_client_calls(store_dir: Path) -> None:
    owner = open_workbench(store_dir, own=True)
    owner.serve()
    try:
        client = open_workbench(store_dir)
        client.put("via socket", id="v", tags=["k=v"])
        assert client.find("via socket", tags=["k=v"]).hits[0].id == "v"
        assert owner.get("v").tags["k"] == "v"
    finally:
        owner.close()
    assert not socket_path(store_dir).exists()


def test_a_flow_from_another_process_runs_through_the_owner(store_dir: Path) -> None:
    owner = open_workbench(store_dir, own=True)
    owner.serve()
    try:
        owner.put("OAuth2 tokens for the API gateway", tags=["topic=auth"])
        owner.put(
            "# mine\nrules:\n  - {id: s, do: find, with: {query: '{params.query}'}}\n"
            "  - return: {status: done, with: {reason: stored, results: '{s.results}'}}\n",
            id=".state/mine",
        )
        done = subprocess.run(
            [sys.executable, "-m", "keepui", "flow", "mine", "-q", "gateway", "--json",
             "--store", str(store_dir)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["reason"] == "stored" and doc["results"][0]["summary"].startswith("OAuth2")
        missing = subprocess.run(
            [sys.executable, "-m", "keepui", "flow", "nope", "-q", "x", "--store", str(store_dir)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert missing.returncode == 2 and "no state doc 'nope'" in missing.stderr
    finally:
        owner.close()
