"""Answers about now (issue 22): stale hits and find latency on a store where every document
has several versions, with the real model.

The store: N documents, each put V times with a different note text (tag `round=I`), so
(V - 1) / V of the stored versions are archived. Queries, each new to the store:
  * "stale": words of an ARCHIVED version of a sampled document (the text it no longer has);
  * "current": words of the sampled document's current version.
Figures, for the default find (current versions) and for `--history` (every version, which is
what find did before issue 22):
  * stale share: of all top-10 hits, the share that cite an archived version (target 0 by
    default);
  * current recall@1: the sampled document is the first hit for its current words;
  * history finds the past: for stale queries under --history, the sampled document's
    archived version is the first hit;
  * tag filter on superseded tags: `-t round=0` (every document's first version) returns no
    hit by default (target 0 hits);
  * find p50/p95 (hybrid, top 10, the query's vector cached) by default and under --history.

Run: .venv/bin/python benchmarks/bench_history.py [--quick] [--docs N] [--versions V]
Writes benchmarks/results/bench_history.json.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import _common as c


def build(store: Path, docs: int, versions: int) -> tuple[list[list[str]], float]:
    """Put `docs` documents `versions` times each; return their texts per round and the
    seconds the puts took."""
    from keepui_engine import PutSpec, open_workbench

    texts = c.make_notes(docs * versions, seed=7)
    rounds = [texts[r * docs : (r + 1) * docs] for r in range(versions)]
    t0 = time.perf_counter()
    with open_workbench(store, own=True) as wb:
        for r, round_texts in enumerate(rounds):
            wb.put_many(
                [
                    PutSpec(t, id=f"d{i:05d}", tags=[f"round={r}", f"group={i % 7}"])
                    for i, t in enumerate(round_texts)
                ]
            )
    return rounds, time.perf_counter() - t0


def words(text: str, n: int = 10) -> str:
    return " ".join(text.split()[:n])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 documents, 60 queries")
    ap.add_argument("--docs", type=int, default=None)
    ap.add_argument("--versions", type=int, default=5)
    ap.add_argument("--queries", type=int, default=None)
    args = ap.parse_args()
    docs = args.docs or (300 if args.quick else 1500)
    n_queries = args.queries or (60 if args.quick else 200)
    report = c.Report("bench_history", args.quick)
    from keepui_engine import open_workbench

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        rounds, seconds = build(store, docs, args.versions)
        report.add("store: documents x versions", docs * args.versions, "versions")
        report.add("build (put_many, real model)", seconds, "s")
        rng = random.Random(11)
        sample = rng.sample(range(docs), n_queries)
        last = args.versions - 1
        stale_q = [(i, words(rounds[rng.randrange(last)][i])) for i in sample]
        current_q = [(i, words(rounds[last][i])) for i in sample]
        with open_workbench(store, own=True) as wb:
            # every query's vector is cached before timing, so both ways compare retrieval
            # alone (the persistent embedding cache would otherwise favour the second)
            for _, q in stale_q + current_q:
                wb.find(q, limit=1)
            figures: dict[str, dict[str, list[float]]] = {}
            for label, history in (("default", False), ("history", True)):
                f = figures.setdefault(label, {"ms": [], "stale": [], "hits": []})
                recall, past = 0, 0
                for kind, queries in (("stale", stale_q), ("current", current_q)):
                    for i, q in queries:
                        t0 = time.perf_counter()
                        hits = wb.find(q, limit=10, history=history).hits
                        f["ms"].append((time.perf_counter() - t0) * 1000)
                        f["stale"].append(sum(h.version > 0 for h in hits))
                        f["hits"].append(len(hits))
                        top = hits[0] if hits else None
                        target = f"d{i:05d}"
                        if kind == "current" and top and top.id == target and top.version == 0:
                            recall += 1
                        if kind == "stale" and top and top.id == target and top.version > 0:
                            past += 1
                stale_share = sum(f["stale"]) / max(sum(f["hits"]), 1)
                report.add(
                    f"{label}: share of top-10 hits citing an archived version",
                    stale_share,
                    "ratio",
                    "= 0" if not history else None,
                    stale_share == 0 if not history else None,
                )
                report.add(f"{label}: current recall@1", recall / n_queries, "ratio")
                report.add(
                    f"{label}: stale query -> archived version first", past / n_queries, "ratio"
                )
                report.add(
                    f"{label}: find p50 (hybrid, top 10, cached query vector)",
                    c.pct(f["ms"], 50),
                    "ms",
                )
                report.add(f"{label}: find p95", c.pct(f["ms"], 95), "ms")
            superseded = sum(
                len(wb.find(q, tags=["round=0"], limit=10).hits) for _, q in stale_q[:20]
            )
            report.add(
                "default: hits for -t round=0 (superseded tags), 20 queries",
                superseded,
                "hits",
                "= 0",
                superseded == 0,
            )
    report.note(
        "'history' is every version, i.e. what a default find searched before issue 22; "
        f"{args.versions - 1} of {args.versions} stored versions are archived"
    )
    report.finish()


if __name__ == "__main__":
    main()
