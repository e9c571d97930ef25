"""HNSW (usearch, f16) recall@10 against exact search, on REAL all-MiniLM-L6-v2 embeddings.

Embeds N distinct synthetic notes (20,000; ~100-300 s on 2 cores) with the real model, appends
them to a `keepui_engine.store.duckdb.vectors.VectorIndex` in a temp dir with exact_max lowered to
1,000 so that `maybe_extend_hnsw()` builds the graph and `search` takes the HNSW path, then
compares top-10 keys for two query sets: 200 held-out notes and 200 short search queries.
  * index_k10:  VectorIndex.search(q, 10) (HNSW candidates re-ranked exactly)
  * index_k30:  top 10 of VectorIndex.search(q, 30) (what Engine.find asks for with limit 10)
  * raw_usearch: the graph's own top 10 (f16 distances, no re-rank)
The reference is the same index with exact_max raised above N (exact numpy search).
Target: recall@10 >= 0.98.

Run: .venv/bin/python benchmarks/bench_recall.py [--quick] [--reuse]
  --quick  3,000 notes instead of 20,000
  --reuse  keep/reuse the embeddings in benchmarks/results/ (skips re-embedding on a rerun)
Writes benchmarks/results/bench_recall.json.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import _common as c
import numpy as np

TARGET_RECALL = 0.98
EXACT_MAX = 1000


def embed(texts: list[str], reuse: bool) -> tuple[np.ndarray, float]:
    """Real embeddings of texts (from the cache file when --reuse finds one) and seconds spent."""
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    cache = c.RESULTS / f"recall-embeddings-{digest}.npy"
    if reuse and cache.exists():
        return np.load(cache), 0.0
    t0 = time.perf_counter()
    vecs = c.default_embedder().embed(texts)
    spent = time.perf_counter() - t0
    if reuse:
        c.RESULTS.mkdir(parents=True, exist_ok=True)
        np.save(cache, vecs)
    return vecs, spent


def recall(got: list[set[int]], ref: list[set[int]]) -> float:
    return float(np.mean([len(a & b) / max(len(b), 1) for a, b in zip(got, ref, strict=True)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3,000 notes instead of 20,000")
    ap.add_argument("--reuse", action="store_true", help="cache the embeddings in results/")
    args = ap.parse_args()
    n = 3000 if args.quick else 20000
    rep = c.Report("bench_recall", args.quick)
    corpus = c.make_notes(n, seed=41)
    held_out = c.make_notes(200, seed=42, exclude=set(corpus))
    queries = c.make_queries(200, seed=43)
    vecs, spent = embed(corpus + held_out + queries, args.reuse)
    if spent:
        rep.add("embed_notes_per_s", len(vecs) / spent, "notes/s")
        print(f"embedded {len(vecs)} texts in {spent:.1f} s", flush=True)
    else:
        rep.note("embeddings reused from benchmarks/results/ (--reuse)")
    base, qsets = vecs[:n], {"heldout_notes": vecs[n : n + 200], "short_queries": vecs[n + 200 :]}

    from keepui_engine.store.duckdb.vectors import VectorIndex

    with tempfile.TemporaryDirectory(prefix="keepui-bench-recall-") as tmp:
        index = VectorIndex(Path(tmp), c.MODEL, base.shape[1], EXACT_MAX)
        index.append(np.arange(1, n + 1, dtype=np.int64), base)
        with c.timer() as t_build:
            built = index.maybe_extend_hnsw()
        assert built, "maybe_extend_hnsw did not build a graph"
        rep.add(f"hnsw_build_{n // 1000}k_s", t_build[0], "s")
        raw = index._hnsw_view()  # noqa: SLF001 - the graph itself, for the raw figure
        for name, qv in qsets.items():
            lat: dict[str, list[float]] = {"hnsw": [], "exact": []}
            res: dict[str, list[set[int]]] = {}
            for mode, limit in (("hnsw", EXACT_MAX), ("exact", 10**12)):
                index.exact_max = limit
                k10, k30 = [], []
                for q in qv:
                    t0 = time.perf_counter()
                    keys, _, method, _ = index.search(q, 10)
                    lat[mode].append(time.perf_counter() - t0)
                    assert method == mode, f"expected {mode}, the index used {method}"
                    k10.append(set(keys.tolist()))
                    k30.append(set(index.search(q, 30)[0][:10].tolist()))
                res[f"{mode}_k10"], res[f"{mode}_k30"] = k10, k30
            index.exact_max = EXACT_MAX
            raw_top = [set(np.asarray(raw.search(q, 10).keys).tolist()) for q in qv]
            figures = {
                "index_k10": recall(res["hnsw_k10"], res["exact_k10"]),
                "index_k30": recall(res["hnsw_k30"], res["exact_k10"]),
                "raw_usearch": recall(raw_top, res["exact_k10"]),
            }
            for fig, value in figures.items():
                target = None if fig == "raw_usearch" else f">= {TARGET_RECALL}"
                rep.add(
                    f"recall@10_{fig}_{name}",
                    value,
                    "",
                    target,
                    None if target is None else value >= TARGET_RECALL,
                )
            rep.add(f"search_hnsw_p50_ms_{name}", 1000 * c.pct(lat["hnsw"], 50), "ms")
            rep.add(f"search_exact_p50_ms_{name}", 1000 * c.pct(lat["exact"], 50), "ms")

    rep.note(
        f"{n} distinct synthetic notes embedded with the real all-MiniLM-L6-v2; "
        f"VectorIndex exact_max={EXACT_MAX} so search uses the usearch f16 graph "
        "(connectivity 16, expansion_add 128, expansion_search 256)"
    )
    rep.note("query sets: 200 held-out notes (same generator) and 200 short queries")
    rep.finish()


if __name__ == "__main__":
    main()
