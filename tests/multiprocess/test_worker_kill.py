"""Kill the process whose worker is running a task: the claim is recovered, the task runs once."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mp_support import child_env, keepui_exe

pytestmark = pytest.mark.slow

LONG = " ".join(f"Sentence {i} is about tides, boats and the harbour wall." for i in range(80))


class _Stub(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that hangs until released, then answers."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        server = self.server
        server.requests += 1  # type: ignore[attr-defined]
        server.arrived.set()  # type: ignore[attr-defined]
        self.rfile.read(int(self.headers["Content-Length"]))
        if not server.release.wait(30):  # type: ignore[attr-defined]
            return
        body = json.dumps({"choices": [{"message": {"content": "A summary of the harbour."}}]})
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())
        except OSError:
            pass  # the client was killed


@pytest.fixture
def stub() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    httpd.requests = 0  # type: ignore[attr-defined]
    httpd.arrived = threading.Event()  # type: ignore[attr-defined]
    httpd.release = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.release.set()  # type: ignore[attr-defined]
    httpd.shutdown()


def keepui(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [keepui_exe(), *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
    )


def test_killed_worker_claim_is_recovered_and_completes_once(
    store: Path, stub: ThreadingHTTPServer, children: object
) -> None:
    toml = (store / "keepui.toml").read_text()
    port = stub.server_address[1]
    toml = toml.replace('provider = "extractive"', 'provider = "openai-compatible"')
    toml = toml.replace(
        '# base_url = "http://127.0.0.1:11434/v1"', f'base_url = "http://127.0.0.1:{port}/v1"'
    )
    (store / "keepui.toml").write_text(toml.replace('# model = "llama3.2"', 'model = "stub"'))
    assert keepui(store, "put", LONG, "-i", "long").returncode == 0
    serve = subprocess.Popen(
        [keepui_exe(), "serve", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    children.add(serve)  # type: ignore[attr-defined]
    assert stub.arrived.wait(60), "the serving process's worker never called the summarizer"  # type: ignore[attr-defined]
    serve.send_signal(signal.SIGKILL)
    serve.wait(30)
    report = json.loads(keepui(store, "pending", "--json").stdout)
    assert report["counts"] == {"summarize": {"running": 1}}  # claimed by a dead process
    stub.release.set()  # type: ignore[attr-defined]
    drained = keepui(store, "pending", "--drain", "--json")
    assert drained.returncode == 0, drained.stderr
    result = json.loads(drained.stdout)
    assert [(r["task"], r["outcome"]) for r in result["drained"]] == [("summarize", "done")]
    assert result["counts"] == {}
    item = json.loads(keepui(store, "get", "long", "--json").stdout)
    assert item["summary"] == "A summary of the harbour." and item["pending"] == []
    assert stub.requests == 2  # type: ignore[attr-defined]
