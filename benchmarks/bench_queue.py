"""Background work: queue overhead, extractive summary throughput, put-to-summary latency.

  * queue overhead: 10,000 tasks enqueued in a real store file, then claim + complete of each
    (one transaction each, as the worker does), per task;
  * extractive summarize throughput with the real all-MiniLM-L6-v2 over real long texts
    (SciFact abstracts of 200+ words, and the Wikipedia pages and Federal Register PDF of the
    shared files), docs/s;
  * put to summary visible: an owner Workbench with its worker thread running (as in
    `keepui serve` and the TUI), a long note put, then the time until `get` shows the
    extractive summary (polled every 5 ms), median of 20.

Run: .venv/bin/python benchmarks/bench_queue.py [--quick]
Writes benchmarks/results/bench_queue.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path

import _common as c

SHARED = c.REPO.parent / "shared" / "data"


def queue_overhead(rep: c.Report, n: int) -> None:
    import duckdb

    from keepui_engine.store.duckdb.schema import migrate
    from keepui_engine.store.tables import pending

    with tempfile.TemporaryDirectory(prefix="keepui-bench-queue-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "q.duckdb"))
        migrate(con)
        now = datetime(2026, 11, 22)
        t0 = time.perf_counter()
        con.execute("BEGIN TRANSACTION")
        for i in range(n):
            pending.enqueue(con, "summarize", f"doc{i}", 1, {}, now)
        con.execute("COMMIT")
        rep.add(f"enqueue_{n}_per_task_ms", 1000 * (time.perf_counter() - t0) / n, "ms")
        lat = []
        while True:
            t1 = time.perf_counter()
            con.execute("BEGIN TRANSACTION")
            task = pending.claim(con, "1:1", now)
            con.execute("COMMIT")
            if task is None:
                break
            con.execute("BEGIN TRANSACTION")
            pending.complete(con, task.id)
            con.execute("COMMIT")
            lat.append(time.perf_counter() - t1)
        rep.add(f"claim_complete_at_{n}_queued_p50_ms", 1000 * c.pct(lat, 50), "ms")
        rep.add(f"claim_complete_at_{n}_queued_p95_ms", 1000 * c.pct(lat, 95), "ms")
        rep.add("tasks_claimed", len(lat), "")
        con.close()


def long_texts(limit: int) -> list[str]:
    texts = []
    corpus = SHARED / "beir" / "scifact" / "corpus.jsonl"
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if len(doc["text"].split()) >= 200:
                texts.append(doc["text"])
            if len(texts) >= limit:
                break
    from keepui_engine.ingest.extract import extract

    for rel in (
        "html/wikipedia-mozilla.html",
        "html/wikipedia-hermitian-matrix.html",
        "pdf/federal-register-2020-17221.pdf",
    ):
        path = SHARED / "docs" / rel
        texts.append(extract(path.read_bytes(), name=path.name).text)
    return texts


def summarize_throughput(rep: c.Report, n: int) -> None:
    from keepui_engine.providers.summary import SummaryConfig, create_summarizer

    emb = c.default_embedder()
    emb.embed(["warm up"])
    summarizer = create_summarizer(SummaryConfig(), emb.embed)
    texts = long_texts(n)
    t0 = time.perf_counter()
    for text in texts:
        summarizer.summarize(text)
    wall = time.perf_counter() - t0
    words = sum(len(t.split()) for t in texts)
    rep.add("extractive_docs", len(texts), "docs")
    rep.add("extractive_mean_words_per_doc", words / len(texts), "words")
    rep.add("extractive_docs_per_s", len(texts) / wall, "docs/s")


def put_to_summary(rep: c.Report, rounds: int) -> None:
    from keepui_engine import open_workbench

    texts = long_texts(rounds)[:rounds]
    with tempfile.TemporaryDirectory(prefix="keepui-bench-p2s-") as tmp:
        wb = open_workbench(Path(tmp) / "store", own=True)
        wb.warm_up()
        wb.start_worker()
        lat = []
        for i, text in enumerate(texts):
            t0 = time.perf_counter()
            wb.put(text, id=f"doc{i}")
            while wb.get(f"doc{i}").pending:
                time.sleep(0.005)
            lat.append(time.perf_counter() - t0)
        wb.close()
    rep.add("put_to_summary_visible_p50_ms", 1000 * c.pct(lat, 50), "ms")
    rep.add("put_to_summary_visible_p95_ms", 1000 * c.pct(lat, 95), "ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 tasks, 50 texts")
    args = ap.parse_args()
    rep = c.Report("bench_queue", args.quick)
    queue_overhead(rep, 1000 if args.quick else 10000)
    summarize_throughput(rep, 50 if args.quick else 300)
    put_to_summary(rep, 20)
    rep.finish()


if __name__ == "__main__":
    main()
