"""Reads beside the queue worker: a document, its versions and a diff come back while a
background task is in its slow step; readers go before the worker's next turn, and the
worker runs at a lower CPU priority; closing the owner abandons the task at its next
checkpoint and gives it back to the queue."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import support
from support import make_fake_store

import keepui_engine.providers.summary as summary_module
from keepui_engine import Workbench, open_workbench
from keepui_engine.core.gate import Gate
from keepui_engine.work.worker import BACKGROUND_NICE, WorkerThread

WAIT_S, V1, V2, SUMMARY = support.WAIT_S, support.AUTH_V1, support.AUTH_V2, support.AUTH_SUMMARY
BlockingSummarizer = support.BlockingSummarizer


@pytest.fixture
def slow() -> BlockingSummarizer:
    return BlockingSummarizer()


@pytest.fixture
def owner(
    tmp_path: Path, slow: BlockingSummarizer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Workbench]:
    """An owner of a store holding `auth-05` (two long versions, its summary queued)."""
    monkeypatch.setattr(summary_module, "create_summarizer", lambda *a, **k: slow)
    wb = open_workbench(make_fake_store(tmp_path / "store"), own=True)
    wb.put(V1, id="auth-05")
    wb.put(V2, id="auth-05")
    wb.put("Rivers of Europe: the Danube and the Rhine.", id="rivers")
    try:
        yield wb
    finally:
        slow.release.set()
        if wb.owns_store:
            wb.close()


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Event, list[Any]]:
    """Run `fn` in a thread; the event is set when it has returned (or raised)."""
    done, out = threading.Event(), []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    return done, out


def test_get_versions_and_diff_return_while_a_summary_is_computed(
    owner: Workbench, slow: BlockingSummarizer
) -> None:
    owner.start_worker()
    assert slow.entered.wait(WAIT_S)  # the worker is inside its slow step now

    def read() -> tuple[Any, ...]:
        return (
            owner.get("auth-05"),
            owner.history("auth-05"),
            owner.diff("auth-05"),
            owner.find("auth token signing keys", limit=3),
        )

    done, out = in_thread(read)
    assert done.wait(WAIT_S), "a read waited for the background task"
    assert not slow.release.is_set()  # the summary was still being computed throughout
    item, versions, diff, found = out[0]
    assert [w["task"] for w in item.pending] == ["summarize"]
    assert item.pending[0]["state"] == "running"  # the pending summary shows as pending
    assert [v.version for v in versions] == [2, 1]
    assert any(r.kind != "equal" for r in diff.rows)
    assert "auth-05" in [h.id for h in found.hits]
    slow.release.set()
    owner.close()  # the worker finishes its task or gives it back; either way nothing is lost
    with open_workbench(owner.store) as wb:
        done_or_queued = wb.get("auth-05")
        assert done_or_queued.summary == "The auth service checks tokens." or (
            done_or_queued.pending[0]["state"] == "queued"
        )


def test_close_abandons_a_task_in_its_slow_step_and_queues_it_again(
    owner: Workbench, slow: BlockingSummarizer
) -> None:
    owner.start_worker()
    assert slow.entered.wait(WAIT_S)
    owner.close()  # returns although the summary is still being computed
    assert not slow.release.is_set() and owner.background_running
    slow.release.set()  # the thread comes back, finds the owner gone and drops its result
    with open_workbench(owner.store) as wb:
        item = wb.get("auth-05")
        assert item.summary != "The auth service checks tokens."
        assert [(w["task"], w["state"], w["attempts"]) for w in item.pending] == [
            ("summarize", "queued", 0)  # given back, the attempt uncounted
        ]


def test_a_waiting_reader_goes_before_the_next_background_turn() -> None:
    gate = Gate()
    order: list[str] = []
    first_turn, reader_waits = threading.Event(), threading.Event()

    def background() -> None:
        with gate.enter("background"):
            first_turn.set()
            assert reader_waits.wait(WAIT_S)
        for _ in range(200):  # turn after turn at once (tasks that finish quickly): the
            with gate.enter("background"):  # reader goes first all the same (an unfair lock
                order.append("background")  # let it wait through all 200 about 1 run in 5)

    def reader() -> None:
        with gate.enter("read"):
            order.append("reader")

    worker = threading.Thread(target=background)
    worker.start()
    assert first_turn.wait(WAIT_S)
    reading = threading.Thread(target=reader)
    reading.start()
    assert gate.wait_for_readers(1, WAIT_S)  # the reader is queued for the connection
    reader_waits.set()
    worker.join(WAIT_S)
    reading.join(WAIT_S)
    assert order.index("reader") == 0


def test_a_find_lends_the_store_while_the_model_embeds_its_query(
    owner: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = owner.embedder
    inside, go_on = threading.Event(), threading.Event()
    original = embedder.embed

    def held(texts: list[str]) -> Any:
        if any("HOLD" in t for t in texts):
            inside.set()
            assert go_on.wait(WAIT_S)
        return original(texts)

    monkeypatch.setattr(embedder, "embed", held)
    finding, _ = in_thread(lambda: owner.find("HOLD the rivers of Europe", mode="dense"))
    assert inside.wait(WAIT_S)  # the find's query is in the model
    done, out = in_thread(lambda: owner.get("rivers"))
    assert done.wait(WAIT_S), "a read waited for another read's query embedding"
    assert out[0].id == "rivers"
    go_on.set()
    assert finding.wait(WAIT_S)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice: Linux")
def test_the_worker_thread_runs_at_a_lower_cpu_priority() -> None:
    seen: list[int] = []
    stepped = threading.Event()

    def step(owner: str, live: list[str]) -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        stepped.set()

    worker = WorkerThread(step, idle_s=WAIT_S)
    worker.start()
    assert stepped.wait(WAIT_S)
    worker.stop(WAIT_S)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen[0] == min(mine + BACKGROUND_NICE, 19)  # the UI and requests get the CPU first
