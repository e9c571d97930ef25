"""Ranking quality on collections nobody tuned for: every mode's nDCG@10 side by side.

Builds (once, under ~/.cache/keepui/collections; see collections_build.py) test collections
from what is on this machine, ingests each twice with the real model, with the default [ingest]
split settings (parts only past 512 words) and with the passage setting (`chunk_size = 160`,
`chunk_overlap = 40`: passages one MiniLM vector sees whole), and scores them through `keepui
eval`'s own path (trec_eval, a query's own id dropped as BEIR does): on the default stores
dense, bm25, RRF, the default (`hybrid`) and `old` (what find did before issue 15: share
fusion, no sentence pooling); on the passage stores dense, bm25 and hybrid. With the 95%
bootstrap interval of the default and a paired randomization test of passages against it.
BEIR SciFact itself is the last row: the held-out check, never used to choose.

The eval scratch stores are keyed by corpus, model and split settings (`…-c160-o40-m50`);
this script writes the passage setting's keepui.toml before `keepui eval` opens it.

Then the default's find latency at SciFact size, in-process, limit 10 (what a person asks for)
and limit 100 (what eval asks for), query embedding included unless the store's embedding
cache already holds the query.

Run: .venv/bin/python benchmarks/bench_collections.py [--only NAME]... [--skip-latency]
  first run: ~60 min of ingest on 2 cores (8,392 + 2,428 + 300 + 70 + 5,183 texts, twice);
  later runs ~10 min (the stores are reused).
Writes benchmarks/results/bench_collections.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c
import collections_build as cb

from keepui_engine import open_workbench
from keepui_engine.client.beir import evaluate
from keepui_engine.core.config import DEFAULT_TOML
from keepui_engine.search import query_vector as qv
from keepui_engine.search.evaluation import load_beir, scratch_store
from keepui_engine.search.significance import paired_test

MODES = ["dense", "bm25", "hybrid:rrf", "hybrid"]
PASSAGE_MODES = ["dense", "bm25", "hybrid"]
OLD = ["hybrid:share"]  # run with the query pooling off: what find did before issue 15
COLUMNS = ["old", "dense", "bm25", "hybrid:rrf", "hybrid", "p dense", "p bm25", "p hybrid"]
SHOWN = {"hybrid:rrf": "rrf", "hybrid": "new", "p dense": "dense160", "p bm25": "bm25_160"}
SHOWN["p hybrid"] = "hyb160"
PASSAGES = (160, 40, 50)  # chunk_size, chunk_overlap, min_chunk_size of the passage setting


def ingest_settings() -> tuple[int, int, int]:
    """The [ingest] split settings a new store gets (keepui.toml's defaults)."""
    import tomllib

    ing = tomllib.loads(DEFAULT_TOML)["ingest"]
    return ing["chunk_size"], ing["chunk_overlap"], ing["min_chunk_size"]


def store_for(folder: Path, split: tuple[int, int, int]) -> Path:
    """The eval scratch store of a collection for these split settings, keepui.toml written."""
    store = scratch_store(folder / "corpus.jsonl", c.MODEL, split)
    if not (store / "keepui.toml").exists():
        store.mkdir(parents=True, exist_ok=True)
        text = DEFAULT_TOML
        keys = ("chunk_size", "chunk_overlap", "min_chunk_size")
        for key, value in zip(keys, split, strict=True):
            text = re.sub(rf"(?m)^{key} = \d+$", f"{key} = {value}", text)
        (store / "keepui.toml").write_text(text)
    return store


def score(folder: Path) -> tuple[Any, Any, Any]:
    """(the default find's result, the passage setting's, the pre-issue-15 find's)."""
    default = store_for(folder, ingest_settings())
    new = evaluate(folder, modes=MODES, compare="hybrid", store=default)
    passages = evaluate(
        folder, modes=PASSAGE_MODES, compare="hybrid", store=store_for(folder, PASSAGES)
    )
    saved = qv.MIN_WORDS
    qv.MIN_WORDS = 10**9  # a query never pools its sentences: the old query vector
    try:
        old = evaluate(folder, modes=OLD, compare="hybrid:share", store=default)
    finally:
        qv.MIN_WORDS = saved
    return new, passages, old


def collections(scratch: Path) -> dict[str, Path]:
    """Name -> BEIR folder of every collection, SciFact last."""
    found = {f"sci-{k}": v for k, v in cb.sci_halves().items()}
    found["sci-claims"] = cb.sci_claims()
    found.update({f"bundle-{k}": v for k, v in cb.sci_bundles().items()})
    found["docs-passages"] = cb.docs_passages(scratch / "docs-store")
    found["py-reference"] = cb.py_reference()
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
        f"load {os.getloadavg()[0]:.2f}; nDCG@10 of: old = find before issue 15 (share fusion, "
        f"no sentence pooling); dense, bm25, rrf, new = the default split {ingest_settings()}; "
        f"dense160, bm25_160, hyb160 = the passage setting {PASSAGES}; new-max = new - the "
        "better of dense and bm25; p-max = hyb160 - the best single channel of either store; "
        "p-new = hyb160 - new with its paired p"
    )
    head = f"{'collection':20s} {'docs':>6s} {'qs':>4s} " + " ".join(
        f"{SHOWN.get(m, m):>8s}" for m in COLUMNS
    )
    print(head + f" {'new 95% CI':>15s} {'new-max':>8s} {'p-max':>8s} {'p-new (p)':>16s}")
    for name, folder in chosen.items():
        t0 = time.perf_counter()
        new, pas, old = score(folder)
        per = {
            **new.per_query,
            **{f"p {m}": pas.per_query[m] for m in PASSAGE_MODES},
            "old": old.per_query["hybrid:share"],
        }
        nd = {m: sum(q["ndcg@10"] for q in per[m].values()) / len(per[m]) for m in COLUMNS}
        low, high = new.intervals["hybrid"]["ndcg@10"]
        qids = list(per["hybrid"])
        vs_new = paired_test(
            [per["p hybrid"][q]["ndcg@10"] for q in qids],
            [per["hybrid"][q]["ndcg@10"] for q in qids],
        )
        best = max(nd["dense"], nd["bm25"])
        p_best = max(best, nd["p dense"], nd["p bm25"])
        print(
            f"{name:20s} {new.docs:6d} {new.queries:4d} "
            + " ".join(f"{nd[m]:8.4f}" for m in COLUMNS)
            + f" [{low:.3f}, {high:.3f}] {nd['hybrid'] - best:+8.4f} "
            f"{nd['p hybrid'] - p_best:+8.4f} {vs_new.delta:+.4f} ({vs_new.p:.3f})"
        )
        rows[name] = {
            "folder": str(folder),
            "store": new.store,
            "seconds": time.perf_counter() - t0,
            "ingest_s": {"default": new.ingest_s, "passages": pas.ingest_s},
            "ndcg@10": nd,
            "passages_vs_default": vs_new.to_dict(),
            "new": {k: v for k, v in new.to_dict().items() if k != "per_query"},
            "passages": {k: v for k, v in pas.to_dict().items() if k != "per_query"},
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
