"""bench_tui's rows with queued work on long notes (issue 25, items 9 and 10): Enter to the
first hit painted, the document screen opened while the queue worker summarises long notes
(the code before the fix, emulated, and after), and quitting a real `keepui` process while a
summary is being computed.

Store: 20 long notes (20-50 KB of seeded sentences, two versions each) and three real files
from ../shared/data/docs (two Wikipedia pages and the 15-page Federal Register PDF), their
summaries queued (23 tasks, 2-15 s each with the extractive summarizer on 2 cores).
The real all-MiniLM-L6-v2 throughout. Pilot rows as in bench_tui (the `paint` clock: the first
frame showing the hit row / the document's text). `busy` rows start once the worker has
finished its first task (torch loaded: the steady state of a draining queue), and each
finished summary is queued again, so the worker never runs dry. `before` emulates the
document screen before the fix: the similar items found inside the document's load (the
model embeds the summary first), a find that keeps the store's connection while the model
embeds its query, and a worker at the same CPU priority as the UI; the gate's readers-first
order is not undone. Quit: `python -m keepui` in tmux, Ctrl+Q pressed while a summary runs
(on the search screen, or 2 s after a long note's document came up); the time to process
exit, and the queue read afterwards (nothing lost).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import _common as c

from keepui_engine import KeepuiError

N_LONG = 20
DOCS = ["html/wikipedia-mozilla.html", "html/wikipedia-hermitian-matrix.html",
        "pdf/federal-register-2020-17221.pdf"]  # fmt: skip
OPENS = 8
QUERIES = 10
QUIT_RUNS = 3
TARGET_QUIT_S = 1.0
TARGET_FIRST_HIT_MS = 150.0  # bench_tui's search target (issue 6), for comparison


def build(store: Path, real: Any) -> None:
    """The long notes and the real files, stored with their summaries queued (no worker)."""
    from keepui_engine import open_workbench

    notes, rng = c.make_notes(3000, seed=5), random.Random(1)
    with open_workbench(store, own=True, embedder=real) as wb:
        for i in range(N_LONG):
            size, words = rng.randint(20_000, 50_000), []
            while sum(map(len, words)) + len(words) < size:
                words.append(notes[rng.randrange(len(notes))])
                words[-1] += "\n" if rng.random() < 0.1 else ""
            text = " ".join(words)
            for body in (text, f"{text}\nRevised: {notes[i]}"):
                wb.put(body, id=f"auth-{i:02d}", tags=["bench=long"])
        shared = c.REPO.parent / "shared" / "data" / "docs"
        found = [str(shared / d) for d in DOCS if (shared / d).exists()]
        if found:
            wb.ingest(found, tags=["bench=long"])
        print(f"queue store: {wb.pending()['counts']}", flush=True)


def before_fix(stack: ExitStack) -> None:
    """Emulate the document screen and find of before the fix (see the module docstring)."""
    from contextlib import contextmanager
    from unittest import mock

    from textual import work

    import keepui_engine.search.finding as finding
    import keepui_engine.work.worker as worker
    from keepui.tui.messages import DocumentLoaded, SimilarLoaded
    from keepui.tui.screens.document import SIMILAR, DocumentScreen
    from keepui_engine.core.gate import reader_opening

    @work(thread=True, exclusive=True, group="document", exit_on_error=False)
    def load_document(self: Any, offset: int = 0) -> None:
        item = self.wb.get(self.doc_id)
        versions = self.wb.history(self.doc_id)
        shown = item if offset == 0 else self.wb.get(self.doc_id, offset)
        parts = self.wb.parts(self.doc_id, offset if offset else None)
        found = self.wb.find(item.summary[:500], limit=SIMILAR + 1, mode="dense")
        self._similar_for = item.summary  # the similar items came with the document
        self.post_message(DocumentLoaded(item, versions, parts, shown))
        similar = [h for h in found.hits if h.id != item.id][:SIMILAR]
        self.post_message(SimilarLoaded(item.summary, similar))

    @contextmanager
    def never_lends(lends: bool = True) -> Any:
        with reader_opening(False):
            yield

    stack.enter_context(mock.patch.object(DocumentScreen, "load_document", load_document))
    stack.enter_context(mock.patch.object(finding, "reader_opening", never_lends))
    stack.enter_context(mock.patch.object(worker, "lower_priority", lambda: None))


async def open_documents(b: Any, app: Any, pilot: Any) -> Any:
    """Enter on a long note's hit → the document screen with its text on screen."""
    from keepui.tui.screens.document import DocumentScreen
    from keepui.tui.widgets.result_tabs import ResultTabs

    await b.time_searches(app, pilot, ["auth service notes tag:bench=long"])  # untimed
    pane = app.screen.query_one(ResultTabs).current
    assert pane is not None and pane.ids
    out = b.Timings()

    def shown() -> bool:
        s = app.screen
        return (isinstance(s, DocumentScreen) and s.item is not None
                and b.laid_out(s.query_one("#doc-text")))  # fmt: skip

    for k in range(OPENS):
        pane.focus()
        pane.move_cursor(row=k % len(pane.ids))
        await b.settle(pilot)
        await out.press(pilot, "enter", shown, "the document screen")
        await pilot.press("escape")
        await b.settle(pilot)
    return out


async def pilot_rows(b: Any, template: Path, real: Any, rep: Any, variant: str) -> None:
    """First hit and document opening, `idle`, `busy` or `busy_before` (see module doc);
    `b` is the bench_tui module (its paint probe and Pilot helpers)."""
    from keepui.tui.app import KeepuiApp
    from keepui_engine import Workbench
    from keepui_engine.client.settings import load_settings

    b.PROBE.install()
    store = template.with_name(f"{template.name}-{variant}")
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(template, store)
    wb = Workbench(load_settings(store), own=True, embedder=real)
    wb.warm_up()
    with ExitStack() as stack:
        if variant == "busy_before":
            before_fix(stack)
        if variant != "idle":
            first, done = threading.Event(), []

            def refill(result: dict[str, Any]) -> None:  # the queue never runs dry
                first.set()
                done.append(result)
                with contextlib.suppress(KeepuiError):  # closing
                    wb.summarize(result["doc_id"])

            wb.start_worker(on_result=refill)
            if not first.wait(900):
                raise RuntimeError("the worker finished no task in 15 minutes")
        app = KeepuiApp(wb, poll_interval=None, warm_up=False)
        try:
            async with app.run_test(size=b.SIZE) as pilot:
                await b.settle(pilot)
                queries = c.make_queries(QUERIES + b.WARM_QUERIES, seed=41)
                hits = await b.time_searches(app, pilot, queries)
                hits.report(rep, f"first_hit_{variant}", TARGET_FIRST_HIT_MS)
                docs = await open_documents(b, app, pilot)
                docs.report(rep, f"document_open_{variant}", None)
                if variant != "idle":
                    rep.add(f"tasks_done_during_{variant}", len(done) - 1, "")
        finally:
            wb.close()
    shutil.rmtree(store, ignore_errors=True)


def quit_once(template: Path, store: Path, document: bool) -> tuple[float, int, dict[str, Any]]:
    """Start keepui in tmux, press Ctrl+Q while a summary runs (with `document`, 2 s after a
    long note's document screen came up): (seconds to exit, exit code, the queue after)."""
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(template, store)
    tmux = ["tmux", "-L", f"bench-quit-{os.getpid()}"]
    env = {**os.environ, "PYTHONPATH": str(c.REPO)}  # this checkout's code

    def run(*args: str) -> str:
        done = subprocess.run([*tmux, *args], capture_output=True, text=True, env=env, timeout=60)
        return done.stdout

    def wait_for(word: str, timeout: float = 600) -> None:
        end = time.monotonic() + timeout
        while word not in run("capture-pane", "-p", "-t", "q"):
            if time.monotonic() > end:
                raise RuntimeError(f"keepui never showed {word!r}")
            time.sleep(0.1)

    rc_file = store.with_suffix(".rc")
    command = (f"{sys.executable} -m keepui --store {store}; echo $? > {rc_file}; "
               f"{' '.join(tmux)} wait-for -S exited")  # fmt: skip
    run("new-session", "-d", "-s", "q", "-x", "120", "-y", "40", command)
    try:
        wait_for("model ready")
        wait_for("running")  # the worker has claimed a summary
        if document:
            run("send-keys", "-t", "q", "auth service notes", "Enter")
            wait_for("title · id")  # the results, the focus in the list
            run("send-keys", "-t", "q", "Enter")
            wait_for("text · v")
        time.sleep(2.0)  # into its slow step (each takes 5-15 s)
        waiter = subprocess.Popen([*tmux, "wait-for", "exited"], env=env)
        t0 = time.perf_counter()
        run("send-keys", "-t", "q", "C-q")
        waiter.wait(timeout=120)
        took = time.perf_counter() - t0
    finally:
        run("kill-server")
    listed = subprocess.run(
        [sys.executable, "-m", "keepui", "pending", "--json", "--store", str(store)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    return took, int(rc_file.read_text().strip() or -1), json.loads(listed.stdout)


def quit_rows(template: Path, rep: Any) -> None:
    """Quit time of a real process with a summary running, QUIT_RUNS times, on the search
    screen and on a long note's document screen."""
    if shutil.which("tmux") is None:
        rep.note("quit rows skipped: tmux is not installed")
        return
    goal = f"< {TARGET_QUIT_S:g}"
    codes, left = [], 0
    for where in ("search", "document"):
        times = []
        for i in range(QUIT_RUNS):
            store = template.with_name(f"quit-{where}-{i}")
            took, rc, report = quit_once(template, store, where == "document")
            times.append(took)
            codes.append(rc)
            left += len(report["running"])  # claimed by a process that is gone
            print(f"quit ({where}) {i + 1}: {took:.2f} s, exit code {rc}, "
                  f"queue {report['counts']}", flush=True)  # fmt: skip
        p50, worst = c.pct(times, 50), max(times)
        rep.add(f"quit_{where}_summary_running_p50_s", p50, "s", goal, p50 < TARGET_QUIT_S)
        rep.add(f"quit_{where}_summary_running_max_s", worst, "s", goal, worst < TARGET_QUIT_S)
    rep.add("quit_nonzero_exit_codes", sum(1 for x in codes if x), "", "0", not any(codes))
    rep.add("quit_tasks_left_running", left, "", "0", left == 0)


def run(rep: Any, b: Any) -> None:
    """Build the store and add every row of this module to `rep` (`b`: the bench_tui module)."""
    import asyncio
    import tempfile

    real = c.default_embedder()
    with tempfile.TemporaryDirectory(prefix="keepui-bench-queue-") as tmp:
        template = Path(tmp) / "template"
        with c.timer() as t_build:
            build(template, real)
        print(f"queue store built in {t_build[0]:.0f} s", flush=True)
        for variant in ("idle", "busy", "busy_before"):
            asyncio.run(pilot_rows(b, template, real, rep, variant))
        quit_rows(template, rep)
    rep.note(f"queue rows: {N_LONG} long notes (20-50 KB, 2 versions) + {len(DOCS)} real "
             f"files, summaries queued; {QUERIES} searches after {b.WARM_QUERIES} untimed, "
             f"{OPENS} document openings per variant")  # fmt: skip


def only(b: Any) -> None:
    """`bench_tui.py --queue`: these rows alone, written to results/bench_tui_queue.json."""
    rep = c.Report("bench_tui_queue", False)
    run(rep, b)
    rep.finish()
