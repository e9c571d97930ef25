"""Ranking quality on collections nobody tuned for: every mode's nDCG@10 side by side.

Builds (once, under ~/.cache/keepui/collections; see collections_build.py) test collections
from what is on this machine, ingests each into keepui's cached eval store (real model), and
scores dense, bm25, the old default (`hybrid:share`), RRF and the default (`hybrid`) through
`keepui eval`'s own path (trec_eval, a query's own id dropped as BEIR does), with the 95%
bootstrap interval of the default and a paired randomization test of the default against each
other mode. BEIR SciFact itself is the last row: the held-out check, never used to choose.

Then the default's find latency at SciFact size, in-process, limit 10 (what a person asks for)
and limit 100 (what eval asks for), query embedding included unless the store's embedding
cache already holds the query.

Run: .venv/bin/python benchmarks/bench_collections.py [--only NAME]... [--skip-latency]
  first run: ~15 min of ingest on 2 cores (8,392 + 300 + 80 texts; SciFact's store is reused
  when `keepui eval` built it before); later runs ~2-4 min.
Writes benchmarks/results/bench_collections.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c
import collections_build as cb

from keepui_engine import open_workbench
from keepui_engine import query_vector as qv
from keepui_engine.evaluation import evaluate, load_beir
from keepui_engine.significance import paired_test

MODES = ["dense", "bm25", "hybrid:rrf", "hybrid"]
OLD = ["dense", "hybrid:share"]  # run with the query pooling off: what find did before issue 15
COLUMNS = ["dense0", "dense", "bm25", "old", "hybrid:rrf", "hybrid"]
SHOWN = {"dense0": "dense0", "old": "old", "hybrid:rrf": "rrf", "hybrid": "new"}


def score(folder: Path) -> tuple[Any, Any]:
    """(the new find's result, the old find's) on one collection."""
    new = evaluate(folder, modes=MODES, compare="hybrid")
    saved = qv.MIN_WORDS
    qv.MIN_WORDS = 10**9  # a query never pools its sentences: the old query vector
    try:
        old = evaluate(folder, modes=OLD, compare="hybrid:share")
    finally:
        qv.MIN_WORDS = saved
    return new, old


def collections(scratch: Path) -> dict[str, Path]:
    """Name -> BEIR folder of every collection, SciFact last."""
    found = {f"sci-{k}": v for k, v in cb.sci_halves().items()}
    found["sci-claims"] = cb.sci_claims()
    found["docs-passages"] = cb.docs_passages(scratch / "docs-store")
    found["scifact (held out)"] = cb.SCIFACT
    return found


def latency(folder: Path, store: str) -> dict[str, float]:
    """p50/p95 ms of the default find at limit 10 and 100 on the queries of `folder`."""
    _, texts, _ = load_beir(
        folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / "test.tsv"
    )
    out: dict[str, float] = {}
    with open_workbench(Path(store), own=True) as wb:
        for limit in (10, 100):
            times = []
            for text in texts.values():
                t0 = time.perf_counter()
                wb.find(text, limit=limit)
                times.append((time.perf_counter() - t0) * 1000)
            out[f"p50_ms_limit{limit}"] = statistics.median(times)
            out[f"p95_ms_limit{limit}"] = c.pct(times, 95)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="collections to run (repeatable)")
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        every = collections(Path(tmp))
    chosen = {k: v for k, v in every.items() if not args.only or k in args.only}
    print(
        f"load {os.getloadavg()[0]:.2f}; nDCG@10 of: dense0 = dense before issue 15, dense = "
        "dense now (long queries pool their sentences), bm25, old = the old default (hybrid "
        "score fusion over the idf sum, dense0's vector), rrf = hybrid:rrf, new = hybrid, the "
        "default now; new-max = new - max(dense, dense0, bm25); new-old with its paired p"
    )
    head = f"{'collection':20s} {'docs':>6s} {'qs':>4s} " + " ".join(
        f"{SHOWN.get(m, m):>7s}" for m in COLUMNS
    )
    print(head + f" {'new 95% CI':>15s} {'new-max':>8s} {'new-old (p)':>16s} {'R@100':>6s}")
    for name, folder in chosen.items():
        t0 = time.perf_counter()
        new, old = score(folder)
        per = {
            **new.per_query,
            "dense0": old.per_query["dense"],
            "old": old.per_query["hybrid:share"],
        }
        nd = {m: sum(q["ndcg@10"] for q in per[m].values()) / len(per[m]) for m in COLUMNS}
        low, high = new.intervals["hybrid"]["ndcg@10"]
        qids = list(per["hybrid"])
        vs_old = paired_test(
            [per["hybrid"][q]["ndcg@10"] for q in qids], [per["old"][q]["ndcg@10"] for q in qids]
        )
        gain = nd["hybrid"] - max(nd["dense"], nd["dense0"], nd["bm25"])
        print(
            f"{name:20s} {new.docs:6d} {new.queries:4d} "
            + " ".join(f"{nd[m]:7.4f}" for m in COLUMNS)
            + f" [{low:.3f}, {high:.3f}] {gain:+8.4f} "
            f"{vs_old.delta:+.4f} ({vs_old.p:.3f})"
            f" {new.modes['hybrid']['recall@100']:6.4f}"
        )
        rows[name] = {
            "folder": str(folder),
            "store": new.store,
            "seconds": time.perf_counter() - t0,
            "ndcg@10": nd,
            "new_vs_old": vs_old.to_dict(),
            "new": {k: v for k, v in new.to_dict().items() if k != "per_query"},
            "old": {k: v for k, v in old.to_dict().items() if k != "per_query"},
        }
    if not args.skip_latency and "scifact (held out)" in rows:
        lat = latency(cb.SCIFACT, rows["scifact (held out)"]["store"])
        rows["latency"] = lat
        print(
            "default find at SciFact size, in-process: "
            f"limit 10 p50 {lat['p50_ms_limit10']:.1f} ms (p95 {lat['p95_ms_limit10']:.1f}), "
            f"limit 100 p50 {lat['p50_ms_limit100']:.1f} ms (p95 {lat['p95_ms_limit100']:.1f}) "
            "[target p50 <= 25 ms]"
        )
    c.RESULTS.mkdir(parents=True, exist_ok=True)
    (c.RESULTS / "bench_collections.json").write_text(json.dumps(rows, indent=1))
    print(f"load {os.getloadavg()[0]:.2f}; wrote {c.RESULTS / 'bench_collections.json'}")


if __name__ == "__main__":
    main()
