"""bench_flow: query-resolve on SciFact with the real model: outcomes, ticks, latency, and
whether the signals it routes on (margin) really mark confident answers.

Runs the 300 SciFact test queries through plain `find` and through the `query-resolve` flow
on the scratch store `keepui eval` builds (built here first when missing, ~4 min). Reports:
- outcome mix (done / stopped and why), ticks per flow, flow and per-tick latency;
- P@1 and nDCG@10 of the flow's final results (what `find --resolve` prints: limit 10)
  against plain find, with the paired randomization test of the nDCG@10 difference;
- calibration: P@1 of the queries the flow called a "clear winner" against the rest, and for
  a sweep of margin_high, how many queries pass and how often their top hit is relevant.

    .venv/bin/python benchmarks/bench_flow.py [--quick] [--store DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import _common as c
from bench_bm25 import SCIFACT, load_scifact, ndcg10

from keepui_engine import open_workbench
from keepui_engine.search.significance import paired_test


def _p1(ids: list[str], rel: dict[str, int]) -> float:
    return 1.0 if ids and rel.get(ids[0], 0) > 0 else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first 60 queries")
    ap.add_argument("--store", help="a store holding SciFact (default: keepui eval's)")
    args = ap.parse_args()
    if not SCIFACT.exists():
        print(f"skipped: {SCIFACT} is absent (SciFact is read in place, never copied)")
        sys.exit(0)
    from keepui_engine.client.beir import evaluate
    from keepui_engine.search.evaluation import scratch_store

    corpus = SCIFACT / "corpus.jsonl"
    store = Path(args.store) if args.store else scratch_store(corpus, c.MODEL)
    if not (store / "eval.json").exists() and not args.store:
        print(f"building the SciFact store at {store} (keepui eval) …", file=sys.stderr)
        evaluate(corpus, SCIFACT / "queries.jsonl", SCIFACT / "qrels" / "test.tsv")
    _, queries, qrels = load_scifact()
    items = list(queries.items())[: 60 if args.quick else None]
    rep = c.Report("bench_flow", args.quick)
    with open_workbench(store, own=True) as wb:
        wb.warm_up()
        plain_p1, plain_nd, flow_p1, flow_nd, margins = [], [], [], [], []
        outcomes: Counter[str] = Counter()
        ticks, flow_ms, tick_ms = [], [], []
        clear, other = [], []
        by_outcome: dict[str, list[tuple[float, float]]] = {}
        for qid, text in items:
            rel = qrels[qid]
            found = wb.find(text, limit=10)
            ids = [h.id for h in found.hits]
            plain_p1.append(_p1(ids, rel))
            plain_nd.append(ndcg10(ids, rel))
            scores = [h.score for h in found.hits]
            margins.append(((scores[0] - scores[1]) / scores[0]) if len(scores) > 1 else 1.0)
            t0 = time.perf_counter()
            result = wb.run_flow("query-resolve", {"query": text, "limit": 10})  # find --resolve
            flow_ms.append(1000 * (time.perf_counter() - t0))
            tick_ms.extend(t.elapsed_ms for t in result.ticks)
            ticks.append(len(result.ticks))
            fids = [h["id"] for h in result.results]
            flow_p1.append(_p1(fids, rel))
            flow_nd.append(ndcg10(fids, rel))
            kind = f"{result.status}: {result.reason.split(' after adding ')[0]}"
            outcomes[kind] += 1
            by_outcome.setdefault(kind, []).append((plain_p1[-1], flow_p1[-1]))
            (clear if result.reason == "clear winner" else other).append(flow_p1[-1])
    n = len(items)
    rep.add("queries", n, "")
    rep.add("plain_find_p_at_1", statistics.mean(plain_p1), "")
    rep.add("flow_p_at_1", statistics.mean(flow_p1), "")
    rep.add("plain_find_ndcg_at_10", statistics.mean(plain_nd), "")
    better = statistics.mean(flow_nd) >= statistics.mean(plain_nd)
    rep.add("flow_ndcg_at_10", statistics.mean(flow_nd), "", ">= plain find", better)
    paired = paired_test(flow_nd, plain_nd)
    rep.note(
        f"find --resolve vs find, nDCG@10: {paired.delta:+.4f} [{paired.low:+.4f}, "
        f"{paired.high:+.4f}], p = {paired.p:.3f} ({paired.wins} better, {paired.losses} worse)"
    )
    statuses: Counter[str] = Counter()
    for kind in outcomes.elements():
        status, _, reason = kind.partition(": ")
        statuses["ambiguous" if reason.startswith("ambiguous") else status] += 1
    for status in ("done", "ambiguous", "stopped", "error"):
        rep.add(f"outcome_{status}", statuses.get(status, 0), "queries")
    rep.add("ticks_mean", statistics.mean(ticks), "ticks")
    rep.add("ticks_max", max(ticks), "ticks", "<= budget 5", max(ticks) <= 5)
    rep.add("flow_p50_ms", c.pct(flow_ms, 50), "ms")
    rep.add("flow_p95_ms", c.pct(flow_ms, 95), "ms")
    rep.add("tick_p50_ms", c.pct(tick_ms, 50), "ms")
    rep.add("clear_winner_share", len(clear) / n, "")
    if clear:
        rep.add("clear_winner_p_at_1", statistics.mean(clear), "", "> rest", None)
    if other:
        rep.add("rest_p_at_1", statistics.mean(other), "")
    for status, count in outcomes.most_common():
        pairs = by_outcome[status]
        plain = statistics.mean(p for p, _ in pairs)
        flowed = statistics.mean(f for _, f in pairs)
        rep.note(f"outcome {count:>3} × {status}: P@1 plain find {plain:.3f}, flow {flowed:.3f}")
    for t in (0.05, 0.1, 0.15, 0.2, 0.3):
        passed = [p for p, m in zip(plain_p1, margins, strict=True) if m > t]
        share = len(passed) / n
        prec = statistics.mean(passed) if passed else 0.0
        rep.note(f"margin_high {t:.2f}: {share:5.1%} of queries pass, P@1 among them {prec:.3f}")
    rep.finish()


if __name__ == "__main__":
    main()
