"""`keepui put DIR` of ../shared/data/docs: directly, and through a running `keepui serve`.

Each run is a real `.venv/bin/keepui put DIR` subprocess on a fresh store (real
all-MiniLM-L6-v2). Direct: no server; the command takes the store lock and loads the model
itself. Served: a `keepui serve` process (started and warmed before timing, its background
worker on) owns the store; the command reads the files and sends them over the socket in
batches. Target: served median <= direct median (issue 11: a client put of many files is not
slower than a direct one). Also reported: how long after the put the server's worker needed to
finish the queued summaries (it waits while client writes arrive).

Run: .venv/bin/python benchmarks/bench_serve_put.py [--runs N] [--folder DIR]
Writes benchmarks/results/bench_serve_put.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

KEEPUI = str(Path(sys.executable).parent / "keepui")
DOCS = c.REPO.parent / "shared" / "data" / "docs"


def _put(store: Path, folder: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        [KEEPUI, "put", str(folder), "--store", str(store)],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):  # 1: a file failed, which the report names
        raise SystemExit(f"put failed: {done.stderr}")
    return took


def _queue_empty(store: Path) -> bool:
    got = subprocess.run(
        [KEEPUI, "pending", "--json", "--store", str(store)], capture_output=True, text=True
    )
    counts = json.loads(got.stdout)["counts"]
    return not any(n for states in counts.values() for s, n in states.items() if s != "dead")


def _served(store: Path, folder: Path) -> tuple[float, float]:
    init = [KEEPUI, "put", "--text", "init", "--store", str(store)]
    subprocess.run(init, check=True, capture_output=True)
    server = subprocess.Popen(
        [KEEPUI, "serve", "--json", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # {"state": "serving"} once the model is warm
        took = _put(store, folder)
        t0 = time.perf_counter()
        while not _queue_empty(store):
            time.sleep(0.5)
        return took, time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--folder", type=Path, default=DOCS)
    args = ap.parse_args()
    if not args.folder.is_dir():
        raise SystemExit(f"{args.folder} is not here (../shared/data/docs is needed)")
    rep = c.Report("bench_serve_put", quick=False)
    direct, served, drain = [], [], []
    for n in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="keepui-bench-serve-") as tmp:
            direct.append(_put(Path(tmp) / f"direct{n}", args.folder))
            took, after = _served(Path(tmp) / f"served{n}", args.folder)
            served.append(took)
            drain.append(after)
    d, s = c.pct(direct, 50), c.pct(served, 50)
    rep.add("put DIR direct, median", d, "s")
    rep.add("put DIR through serve, median", s, "s", "<= direct", s <= d)
    rep.add("summaries done after the served put, median", c.pct(drain, 50), "s")
    files = sum(1 for p in args.folder.rglob("*") if p.is_file())
    runs = f"direct {[round(x, 1) for x in direct]}, served {[round(x, 1) for x in served]}"
    rep.note(f"{args.folder}: {files} files; runs in s: {runs}")
    rep.note(f"cpu count {os.cpu_count()}")
    rep.finish()


if __name__ == "__main__":
    main()
