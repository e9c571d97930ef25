"""Smoke test in a real terminal: `keepui --store X` in tmux, type a query, read the screen."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import break_summarizer, make_fake_store

from keepui_engine import open_workbench

KEEPUI = Path(sys.executable).with_name("keepui")
pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not KEEPUI.exists(), reason="the keepui script is not installed"),
]


class Tmux:
    """A private tmux server (its own socket) running one session."""

    def __init__(self, name: str) -> None:
        self.base = ["tmux", "-L", name]

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=30, check=False
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "smoke")

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """Poll the pane until `check` holds (a terminal gives no event to wait on)."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if check(text):
                return text
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{text}")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = Tmux(f"keepui-test-{os.getpid()}-{tmp_path.name}")
    yield server
    server.run("kill-server")


def test_type_a_query_and_read_the_results(tmp_path: Path, tmux: Tmux) -> None:
    store = make_fake_store(tmp_path / "store")
    with open_workbench(store, own=True) as wb:
        wb.put("We chose DuckDB for storage.", id="storage-decision", tags=["topic=storage"])
        wb.put("Rivers of Europe: the Danube and the Rhine.", id="rivers")
    command = f"{KEEPUI} --store {store}"
    tmux.run("new-session", "-d", "-s", "smoke", "-x", "120", "-y", "40", command)
    tmux.wait_for(lambda s: "model ready" in s, "the first paint and the model")
    tmux.run("send-keys", "-t", "smoke", "DuckDB storage", "Enter")
    screen = tmux.wait_for(lambda s: "storage-decision" in s and "score" in s, "the results")
    assert "1 DuckDB storage" in screen  # the result tab
    assert "2 items · 2 versions" in screen
    found = subprocess.run(
        [str(KEEPUI), "find", "Danube", "--ids", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert found.returncode == 0 and "rivers" in found.stdout.split()
    tmux.run("send-keys", "-t", "smoke", "C-q")
    tmux.wait_for(lambda _: "smoke" not in tmux.run("list-sessions"), "the app to quit", 15)


def test_keys_only_into_the_results_and_open_a_hit(tmp_path: Path, tmux: Tmux) -> None:
    store = make_fake_store(tmp_path / "store")
    with open_workbench(store, own=True) as wb:
        wb.put("We chose DuckDB for storage.", id="storage-decision", tags=["title=Storage"])
        wb.put("Storage backups copy the directory.", id="backups")
    command = f"{KEEPUI} --store {store}"
    tmux.run("new-session", "-d", "-s", "smoke", "-x", "80", "-y", "24", command)
    tmux.wait_for(lambda s: "model ready" in s and "INPUT" in s, "the first paint, input mode")
    # typed as one burst, as a fast typist or a paste would: the query, then into the results
    tmux.run("send-keys", "-t", "smoke", "storage", "Enter")
    screen = tmux.wait_for(lambda s: "title · id" in s, "the results")
    assert screen.splitlines()[-1].split()[0] == "INPUT"  # the results did not take the focus
    row = next(line for line in screen.splitlines() if line.startswith("│   2  "))
    second = "backups" if "backups" in row else "storage-decision"
    tmux.run("send-keys", "-t", "smoke", "Down", "Down", "Enter")
    screen = tmux.wait_for(lambda s: "versions" in s and "text · v1" in s, "the document")
    assert screen.splitlines()[0].split()[0] == second  # the second hit, opened by keys
    tmux.run("send-keys", "-t", "smoke", "Escape")
    screen = tmux.wait_for(lambda s: "title · id" in s, "back in the results")
    tmux.run("send-keys", "-t", "smoke", "/", "End", " backups")
    screen = tmux.wait_for(lambda s: "storage backups" in s, "the refined query in the bar")
    tmux.run("send-keys", "-t", "smoke", "C-q")
    tmux.wait_for(lambda _: "smoke" not in tmux.run("list-sessions"), "the app to quit", 15)


def test_three_queries_typed_back_to_back_all_run(tmp_path: Path, tmux: Tmux) -> None:
    store = make_fake_store(tmp_path / "store")
    with open_workbench(store, own=True) as wb:
        for word in ("alpha", "beta", "gamma", "exit", "queue", "edit"):
            wb.put(f"A note about {word} and nothing else.", id=f"{word}-note")
    command = f"{KEEPUI} --store {store}"
    tmux.run("new-session", "-d", "-s", "smoke", "-x", "160", "-y", "45", command)
    tmux.wait_for(lambda s: "model ready" in s and "INPUT" in s, "the first paint, input mode")
    # no wait between them; the letters include keys that act in list mode (e, b, p, x, q)
    keys = ["alpha beta", "Enter", "/", "expected queue", "Enter", "gamma", "Enter"]
    tmux.run("send-keys", "-t", "smoke", *keys)
    screen = tmux.wait_for(lambda s: "gamma-note" in s, "the last search's results", 60)
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-1].split()[0] == "INPUT"  # still typing in the bar: nothing else opened
    assert "gamma" in lines[1] and "alpha" not in lines[1]  # the bar holds the last query
    assert "default mode" in lines[1] and "text · v" not in screen  # the search screen
    tmux.run("send-keys", "-t", "smoke", "C-q")
    tmux.wait_for(lambda _: "smoke" not in tmux.run("list-sessions"), "the app to quit", 15)
    with open_workbench(store, own=True) as wb:  # every search ran, in the order typed
        assert [r.q.query for r in reversed(wb.searches())] == [
            "alpha beta",
            "expected queue",
            "gamma",
        ]


def test_quit_leaves_a_running_summary_queued(tmp_path: Path, tmux: Tmux) -> None:
    """Quitting does not wait for the summary the worker is computing: the process exits,
    and the task is back in the queue, its attempt uncounted, to run next time."""
    summarizer = socket.create_server(("127.0.0.1", 0))  # takes the request, never answers
    summarizer.settimeout(60)
    port = summarizer.getsockname()[1]
    store = make_fake_store(tmp_path / "store")
    break_summarizer(store, port=port, timeout_s=600)  # a summary that never comes back
    with open_workbench(store, own=True) as wb:
        wb.put(
            " ".join(["The harbour keeps its boats safe from the winter tides."] * 20), id="long"
        )
        assert [w["task"] for w in wb.get("long").pending] == ["summarize"]
    tmux.run(
        "new-session", "-d", "-s", "smoke", "-x", "120", "-y", "40", f"{KEEPUI} --store {store}"
    )
    request, _ = summarizer.accept()  # the worker is inside its slow step now
    try:
        tmux.wait_for(lambda s: "model ready" in s, "the first paint and the model")
        tmux.run("send-keys", "-t", "smoke", "C-q")
        tmux.wait_for(lambda _: "smoke" not in tmux.run("list-sessions"), "the app to quit", 60)
    finally:
        request.close()
        summarizer.close()
    listed = subprocess.run(
        [str(KEEPUI), "pending", "--json", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert report["counts"] == {"summarize": {"queued": 1}} and report["running"] == []
    with open_workbench(store) as wb:
        [task] = wb.get("long").pending
        assert (task["state"], task["attempts"]) == ("queued", 0)


def test_keys_only_run_an_experiment(tmp_path: Path, tmux: Tmux) -> None:
    store = make_fake_store(tmp_path / "store")
    with (store / "keepui.toml").open("a") as fh:
        fh.write('\n[search.configs.words]\nmode = "dense"\n')
    with open_workbench(store, own=True) as wb:
        wb.put("We chose DuckDB for storage.", id="storage-decision")
        wb.put("Storage backups copy the directory.", id="backups")
        wb.put("Rivers of Europe: the Danube and the Rhine.", id="rivers")
        wb.judge("storage backups", "backups", 3)
        wb.judge("which database", "storage-decision", 2)
        wb.tuning.add_queryset("mine", from_judgments=True)
    command = f"{KEEPUI} --store {store}"
    tmux.run("new-session", "-d", "-s", "smoke", "-x", "120", "-y", "40", command)
    tmux.wait_for(lambda s: "model ready" in s and "INPUT" in s, "the first paint, input mode")
    tmux.run("send-keys", "-t", "smoke", "Escape")  # out of the bar (alone: ESC E is Alt+E)
    tmux.wait_for(lambda s: " LIST " in s, "list mode")
    # the screen opens and `r` runs, typed at once: keys wait for the screen, r for the sets
    tmux.run("send-keys", "-t", "smoke", "E", "r")
    screen = tmux.wait_for(lambda s: "done: mine" in s and "words vs default" in s, "the run", 60)
    row = next(line for line in screen.splitlines() if line.startswith("│ default "))
    assert "[" in row and "ndcg@10" in screen and "mine · 2 queries" in screen
    tmux.run("send-keys", "-t", "smoke", "C-q")
    tmux.wait_for(lambda _: "smoke" not in tmux.run("list-sessions"), "the app to quit", 15)
    with open_workbench(store) as wb:
        [stored] = wb.tuning.experiments("mine")
        assert stored.configs == ["default", "words"] and stored.judged == 2
