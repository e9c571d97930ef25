"""Fusion chosen by leave-one-collection-out: every choice scored where it was not chosen.

For each collection (collections_build.py's, and BEIR SciFact), with the store's default
settings (passages sized to the model's window, fused per passage), this scores dense, bm25
and every fusion candidate (score fusion with three channel weightings, the old share fusion,
RRF) through `keepui eval`'s path (trec_eval, a query's own id dropped). Then, for each
collection in turn, the candidate with the best mean nDCG@10 over the *other* collections is
the one chosen, and its score on the collection left out is reported beside the default's and
the better single channel's, with the paired randomization test of the chosen candidate
against the better channel. A fusion choice only counts if it wins where it was not tuned.

Run: .venv/bin/python benchmarks/bench_loco.py [--only NAME]...
  first run ingests every collection with the real model (about 80 min on 2 cores; the
  eval scratch stores are reused after). Each collection's per-query scores are kept in
  benchmarks/results/loco/ and reused (--fresh scores again); the table goes to
  benchmarks/results/bench_loco.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import _common as c
from bench_collections import collections

from keepui_engine import open_workbench
from keepui_engine.client.beir import evaluate
from keepui_engine.search.evaluation import load_beir, scratch_store, trec_scores
from keepui_engine.search.significance import bootstrap_ci, paired_test
from keepui_engine.store.tables.documents import texts_for_keys

# (name, fusion, (dense weight, bm25 weight)); the first is the default
CANDIDATES = [
    ("score 1:1", "score", (1.0, 1.0)),
    ("score 2:1", "score", (2.0, 1.0)),
    ("score 1:2", "score", (1.0, 2.0)),
    ("share 1:1", "share", (1.0, 1.0)),
    ("rrf 1:1", "rrf", (1.0, 1.0)),
]
DEPTH = 100
RESULTS = Path(__file__).parent / "results"


def per_query(folder: Path) -> dict[str, dict[str, float]]:
    """Run name -> query id -> nDCG@10 on one collection's default store."""
    corpus, queries, qrels = (
        folder / "corpus.jsonl",
        folder / "queries.jsonl",
        folder / "qrels" / "test.tsv",
    )
    store = scratch_store(corpus, c.MODEL)
    if not (store / "eval.json").exists():  # ingest once, through eval's own path
        evaluate(folder, modes=["bm25"], store=store)
    _, texts, judged = load_beir(corpus, queries, qrels)
    out: dict[str, dict[str, float]] = {}
    with open_workbench(store, own=True) as wb:
        engine = wb._engine  # noqa: SLF001 - the channel weights are a keepui.toml setting
        assert engine is not None
        # one set of BM25 statistics, built by this keepui (a scratch store may hold a base an
        # earlier build of it made)
        if engine.fulltext.rebuildable:
            engine.fulltext.rebuild(*texts_for_keys(engine.store.con))  # type: ignore[union-attr]
        base = engine.settings
        runs = [("dense", "dense", None, None), ("bm25", "bm25", None, None)]
        runs += [(n, "hybrid", f, w) for n, f, w in CANDIDATES]
        for name, mode, fusion, weights in runs:
            engine.settings = replace(base, fusion_weights=weights or base.fusion_weights)
            run = {}
            for qid, text in texts.items():
                hits = wb.find(text, limit=DEPTH + 1, mode=mode, fusion=fusion, dedup=False).hits
                run[qid] = [(h.id, h.score) for h in hits if h.id != qid][:DEPTH]
            out[name] = {q: v["ndcg@10"] for q, v in trec_scores(run, judged).items()}
            print(f"  {name:10s} {_mean(out[name]):.4f}", file=sys.stderr, flush=True)
        engine.settings = base
    return out


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / max(len(values), 1)


def loco(scores: dict[str, dict[str, dict[str, float]]]) -> list[dict[str, Any]]:
    """One row per collection: the candidate chosen on the others and how it does here."""
    names = [n for n, _, _ in CANDIDATES]
    rows = []
    for held in scores:
        others = [k for k in scores if k != held]
        chosen = max(
            names, key=lambda n: sum(_mean(scores[k][n]) for k in others) / max(len(others), 1)
        )
        here = scores[held]
        better = max(("dense", "bm25"), key=lambda n: _mean(here[n]))
        qids = sorted(here[chosen])
        test = paired_test([here[chosen][q] for q in qids], [here[better][q] for q in qids])
        plain = paired_test([here[names[0]][q] for q in qids], [here[better][q] for q in qids])
        rows.append(
            {
                "collection": held,
                "queries": len(qids),
                "dense": _mean(here["dense"]),
                "bm25": _mean(here["bm25"]),
                "default": _mean(here[names[0]]),
                "default_ci": list(bootstrap_ci(list(here[names[0]].values()))),
                "default_minus_better": plain.delta,
                "default_p": plain.p,
                "chosen": chosen,
                "chosen_score": _mean(here[chosen]),
                "chosen_minus_better": test.delta,
                "p": test.p,
                **{f"cand {n}": _mean(here[n]) for n in names},
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="collections to score (default: all)")
    ap.add_argument("--fresh", action="store_true", help="score again what results/loco holds")
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = collections(Path(tmp))
        scores = {}
        for name, folder in found.items():
            if args.only and name not in args.only:
                continue
            print(f"{name}", file=sys.stderr, flush=True)
            saved = RESULTS / "loco" / f"{name}.json"
            if args.fresh or not saved.exists():
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_text(json.dumps(per_query(folder)))
            scores[name] = json.loads(saved.read_text())
    rows = loco(scores)
    head = "| collection | queries | dense | bm25 | default [95% CI] | default − better (p) |"
    print(head + " chosen on the others | its score | chosen − better channel (p) |")
    print("|" + "---|" * 9)
    for r in rows:
        lo, hi = r["default_ci"]
        print(
            f"| {r['collection']} | {r['queries']} | {r['dense']:.4f} | {r['bm25']:.4f} | "
            f"{r['default']:.4f} [{lo:.3f}, {hi:.3f}] | "
            f"{r['default_minus_better']:+.4f} ({r['default_p']:.3f}) | {r['chosen']} | "
            f"{r['chosen_score']:.4f} | {r['chosen_minus_better']:+.4f} ({r['p']:.3f}) |"
        )
    print("\ncandidates (nDCG@10 of hybrid):")
    for r in rows:
        cells = " ".join(f"{n}={r['cand ' + n]:.4f}" for n, _, _ in CANDIDATES)
        print(f"  {r['collection']:18s} {cells}")
    out = RESULTS / "bench_loco.json"
    out.write_text(json.dumps({"rows": rows, "scores": scores}, indent=1))


if __name__ == "__main__":
    main()
