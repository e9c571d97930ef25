"""Reads go on while the owner works, and a client of a stopped owner gives up in time
(issue 23, points 3 and 4), with real processes.

The owner's slow steps are made to wait for the test: a summarizer endpoint that answers only
when released, and an embedder (in an owner script) that waits for a line on its stdin. The
tests assert what finished while the slow step was still held, never how long anything took.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mp_support import PYTHON, LineReader, child_env, keepui_exe, wait_until

from keepui_engine import open_workbench

pytestmark = pytest.mark.slow

LONG = " ".join(f"Sentence {i} is about the lighthouse keeper and the storm." for i in range(60))
LONG2 = " ".join(f"Line {i} tells of the ferry, the pier and the fog." for i in range(60))


def keepui(store: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [keepui_exe(), *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )


def start(store: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [keepui_exe(), *args, "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )


def set_answer_timeout(store: Path, seconds: float) -> None:
    toml = (store / "keepui.toml").read_text()
    assert "answer_timeout_s = 10" in toml
    (store / "keepui.toml").write_text(
        toml.replace("answer_timeout_s = 10", f"answer_timeout_s = {seconds}")
    )


# -- a summarizer that answers when the test says so ------------------------------------------
class _Held(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that holds each request until released."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        server = self.server
        self.rfile.read(int(self.headers["Content-Length"]))
        with server.count_lock:  # type: ignore[attr-defined]
            server.requests += 1  # type: ignore[attr-defined]
            n = server.requests  # type: ignore[attr-defined]
        server.arrived.set()  # type: ignore[attr-defined]
        if not server.release.wait(120):  # type: ignore[attr-defined]
            return
        server.answered += 1  # type: ignore[attr-defined]
        body = json.dumps({"choices": [{"message": {"content": f"Summary number {n}."}}]})
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())
        except OSError:
            pass


@pytest.fixture
def llm() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Held)
    httpd.requests = 0  # type: ignore[attr-defined]
    httpd.answered = 0  # type: ignore[attr-defined]
    httpd.count_lock = threading.Lock()  # type: ignore[attr-defined]
    httpd.arrived = threading.Event()  # type: ignore[attr-defined]
    httpd.release = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.release.set()  # type: ignore[attr-defined]
    httpd.shutdown()


def use_llm(store: Path, port: int) -> None:
    toml = (store / "keepui.toml").read_text()
    toml = toml.replace('provider = "extractive"', 'provider = "openai-compatible"')
    toml = toml.replace(
        '# base_url = "http://127.0.0.1:11434/v1"', f'base_url = "http://127.0.0.1:{port}/v1"'
    )
    toml = toml.replace('# model = "llama3.2"', 'model = "held"').replace(
        "timeout_s = 60", "timeout_s = 300"
    )
    (store / "keepui.toml").write_text(toml)


def test_reads_and_writes_go_on_while_the_owner_summarizes(
    store: Path, llm: ThreadingHTTPServer, children: object
) -> None:
    use_llm(store, llm.server_address[1])
    serve = children.add(start(store, "serve", "--json"))  # type: ignore[attr-defined]
    assert serve.stdout is not None and json.loads(serve.stdout.readline())["state"] == "serving"
    assert keepui(store, "put", "a note about bread and rye", "-i", "bread").returncode == 0
    assert keepui(store, "put", LONG, "-i", "long").returncode == 0  # queues a summary
    assert llm.arrived.wait(120), "the owner's worker never asked the summarizer"  # type: ignore[attr-defined]

    # the worker is inside the summarizer, which answers only once the test releases it
    found = keepui(store, "find", "bread and rye", "--json", timeout=60)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["id"] == "bread"
    got = keepui(store, "get", "long", "--json", timeout=60)
    assert got.returncode == 0 and json.loads(got.stdout)["version"] == 1, got.stderr
    with open_workbench(store) as wb:  # finds through the socket, timed in this process
        times = []
        for n in range(20):
            t = time.perf_counter()
            assert wb.find(f"bread question {n}").hits[0].id == "bread"
            times.append(time.perf_counter() - t)
    # a write goes on too: the worker let go of the store, and re-checks before it writes
    newer = keepui(store, "put", LONG2, "-i", "long", timeout=60)
    assert newer.returncode == 0 and "updated long (version 2)" in newer.stderr, newer.stderr
    assert llm.answered == 0  # type: ignore[attr-defined]  # all of that while it was held
    print(f"find while the owner summarizes: median {statistics.median(times) * 1000:.0f} ms")

    llm.release.set()  # type: ignore[attr-defined]

    def settled() -> bool:
        report = json.loads(keepui(store, "pending", "--json").stdout)
        return not any(report["counts"].get("summarize", {}).get(s) for s in ("queued", "running"))

    wait_until(settled, 120, "the summaries to be written")
    item = json.loads(keepui(store, "get", "long", "--json").stdout)
    # version 1's summary (the first request) came back after version 2 was stored: dropped
    assert item["version"] == 2 and item["summary"] == "Summary number 2.", item
    first = json.loads(keepui(store, "get", "long", "-V", "1", "--json").stdout)
    assert first["summary"] != "Summary number 1.", first
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(timeout=60) == 0


# -- an owner whose embedder waits for the test -------------------------------------------------
OWNER = """
import signal, sys, threading
from keepui_engine import open_workbench
from keepui_engine.providers.fake import FakeEmbedder

class Gated(FakeEmbedder):
    def embed(self, texts):
        if any("SLOW" in t for t in texts):
            print("embedding", flush=True)
            sys.stdin.readline()  # the test's go-ahead
        return super().embed(texts)

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
wb = open_workbench(sys.argv[1], own=True, embedder=Gated())
wb.serve(worker=False, on_note=lambda line: print(line, flush=True))
print("serving", flush=True)
while not stop.wait(0.25):
    pass
wb.close()
print("closed", flush=True)
"""


@pytest.fixture
def gated_owner(
    store: Path, children: object
) -> Iterator[tuple[subprocess.Popen[str], LineReader]]:
    """An owner process serving `store`, whose embedder holds any text with SLOW in it until
    the test writes a line to its stdin."""
    set_answer_timeout(store, 1)
    with open_workbench(store) as wb:
        wb.put("a note about bread and rye", id="bread")
    proc = subprocess.Popen(
        [PYTHON, "-c", OWNER, str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    children.add(proc)  # type: ignore[attr-defined]
    out = LineReader(proc.stdout)
    assert out.wait_for(lambda lines: "serving" in lines, 120), proc.stderr
    yield proc, out
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        if proc.stdin is not None:
            proc.stdin.close()  # an embedder still holding reads end of file and goes on
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def go_ahead(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()


def test_reads_go_on_while_a_put_embeds_and_writes_wait_their_turn(
    store: Path, gated_owner: tuple[subprocess.Popen[str], LineReader]
) -> None:
    owner, out = gated_owner
    slow = start(store, "put", "SLOW a long document being embedded", "-i", "slow")
    assert out.wait_for(lambda lines: "embedding" in lines, 120)
    found = keepui(store, "find", "bread", "--json", timeout=60)  # while the put embeds
    assert found.returncode == 0, found.stderr
    assert [h["id"] for h in json.loads(found.stdout)["hits"]] == ["bread"]
    # another write waits for the put's turn, three times its answer timeout, and does not
    # give up: the owner tells it that its request is queued
    outcome: list[object] = []

    def other_put() -> None:
        try:
            with open_workbench(store) as wb:
                outcome.append(wb.put("another note", id="other").action)
        except Exception as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    writer = threading.Thread(target=other_put)
    writer.start()
    writer.join(timeout=3)
    assert writer.is_alive() and outcome == []
    go_ahead(owner)
    assert slow.wait(timeout=60) == 0, slow.stderr.read() if slow.stderr else ""
    writer.join(timeout=60)
    assert outcome == ["created"]
    listed = keepui(store, "list", "--sort", "id", "--json")
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == ["bread", "other", "slow"]


def test_a_request_already_running_when_the_owner_stops_still_finishes(
    store: Path, gated_owner: tuple[subprocess.Popen[str], LineReader]
) -> None:
    """The residual window the README names: the client is told that its request had
    started and may still be applied; it is, once the owner resumes."""
    owner, out = gated_owner
    slow = start(store, "put", "SLOW stored after all", "-i", "late")
    assert out.wait_for(lambda lines: "embedding" in lines, 120)
    owner.send_signal(signal.SIGSTOP)
    try:
        assert slow.wait(timeout=60) == 2
        err = slow.stderr.read() if slow.stderr else ""
        assert "sent nothing for 1 s" in err and "had already started" in err, err
    finally:
        owner.send_signal(signal.SIGCONT)
    go_ahead(owner)
    wait_until(lambda: keepui(store, "get", "late").returncode == 0, 60, "the put to land")
    assert not any("dropped" in line for line in out.snapshot())
