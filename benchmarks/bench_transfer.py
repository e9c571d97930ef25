"""bench_transfer: the SciFact store (5,183 items, real model) exported and imported again.

Each step is a real `keepui` subprocess, timed by wall clock: export to a file, import into an
empty store, export that store again. Checked: the two exports are byte-identical, and `find`
gives the same ids in the same order on both stores for the first 100 test queries. The
export includes system documents (the store's installed `.state/` docs), which BM25 counts in
its statistics: without them the imported store's scores differ in the fourth digit. Run with
the vectors in the file (`--with-vectors`: import writes them, no model work) and without
(import embeds every text, as a put would).

Run: .venv/bin/python benchmarks/bench_transfer.py [--quick] [--store DIR]
Writes benchmarks/results/bench_transfer.json.
"""

from __future__ import annotations

import argparse
import filecmp
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c
from bench_bm25 import SCIFACT, load_scifact

from keepui_engine import open_workbench

KEEPUI = str(Path(sys.executable).parent / "keepui")


def run(*args: str) -> float:
    """Wall seconds of one keepui command (it must succeed)."""
    t0 = time.perf_counter()
    done = subprocess.run([KEEPUI, *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"keepui {' '.join(args)} failed: {done.stderr}")
    return time.perf_counter() - t0


def same_answers(a: Path, b: Path, queries: list[str]) -> int:
    """How many queries give the same ids in the same order on both stores."""
    answers = []
    for store in (a, b):
        with open_workbench(store, own=True) as wb:
            answers.append([[h.id for h in wb.find(q, limit=10).hits] for q in queries])
    return sum(x == y for x, y in zip(*answers, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the run with vectors")
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
    _, queries, _ = load_scifact()
    sample = list(queries.values())[:100]
    rep = c.Report("bench_transfer", args.quick)
    with open_workbench(store) as wb:
        items = wb.stats().items
    rep.add("items", items, "")
    variants = [("with_vectors", ["--with-vectors"])]
    if not args.quick:
        variants.append(("text_only", []))
    for name, flags in variants:
        with tempfile.TemporaryDirectory(prefix="bench-transfer-") as tmp:
            first, second = Path(tmp) / "a.jsonl", Path(tmp) / "b.jsonl"
            target = Path(tmp) / "store"
            options = ["--include-versions", "--include-parts", "--include-system", *flags]
            t_export = run("export", str(first), *options, "--store", str(store))
            t_import = run("import", str(first), "--store", str(target))
            run("export", str(second), *options, "--store", str(target))
            identical = filecmp.cmp(first, second, shallow=False)
            same = same_answers(store, target, sample)
            rep.add(f"{name}_file_mb", first.stat().st_size / 1e6, "MB")
            rep.add(f"{name}_export_s", t_export, "s")
            rep.add(f"{name}_import_s", t_import, "s")
            rep.add(f"{name}_round_trip_s", t_export + t_import, "s")
            rep.add(f"{name}_byte_identical", float(identical), "bool", "1", identical)
            rep.add(f"{name}_same_find_ids", same / len(sample), "share", "1", same == len(sample))
    rep.note("each step is a separate keepui process (model load and store open included)")
    rep.finish()


if __name__ == "__main__":
    main()
