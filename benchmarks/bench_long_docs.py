"""Long documents at put time: the shared docs folder's wall time, passages and store growth.

In one process, an owner-mode Workbench on a fresh store with the real all-MiniLM-L6-v2 (loaded
and warmed before timing), calling `Workbench.ingest([DIR])` as `keepui put DIR` does,
`--repeat` times on fresh stores after one untimed put (the median is reported). Reported: wall
time and the time inside the embedder, the texts embedded (documents and passages), the PDF
pages and slides the folder holds, the store's size on disk after the put (DuckDB, vectors,
BM25 base), and per 1,000 pages: the store's size and the passages' vectors (384 float32 each).

Issue 24's targets: put of this folder no slower than 1.3x the keepui before passages, and
the store grows by at most the passages' vectors. The script runs against whatever keepui is
importable, so the comparison is two runs: this tree, and the earlier one with
PYTHONPATH=<its checkout> (same script, same folder, same machine, one after the other).

Run: .venv/bin/python benchmarks/bench_long_docs.py [--repeat N] [--label NAME]
Writes benchmarks/results/bench_long_docs[-LABEL].json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c

DOCS = c.REPO.parent / "shared" / "data" / "docs"
TARGET_RATIO = 1.3


def pages(folder: Path) -> int:
    """PDF pages and PowerPoint slides in the folder (what "pages" counts here)."""
    import fitz
    from pptx import Presentation

    n = 0
    for path in folder.rglob("*"):
        if path.suffix.lower() == ".pdf":
            with fitz.open(path) as doc:
                n += doc.page_count
        elif path.suffix.lower() == ".pptx":
            n += len(Presentation(str(path)).slides)
    return n


def size_mb(root: Path) -> float:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


def one_put(folder: Path) -> dict[str, Any]:
    from keepui_engine import Workbench
    from keepui_engine.client.settings import load_settings

    with tempfile.TemporaryDirectory(prefix="keepui-bench-long-") as tmp:
        store = Path(tmp) / "store"
        settings = load_settings(store)
        embedder = c.default_embedder(store)
        spent = [0.0, 0]
        inner = embedder.embed

        def timed(texts: list[str]) -> Any:  # the embedder itself, so it still counts tokens
            t0 = time.perf_counter()
            try:
                return inner(texts)
            finally:
                spent[0] += time.perf_counter() - t0
                spent[1] += len(texts)

        embedder.embed = timed  # type: ignore[method-assign]
        wb = Workbench(settings, own=True, embedder=embedder)
        wb.warm_up()
        spent[:] = [0.0, 0]
        t0 = time.perf_counter()
        report = wb.ingest([str(folder)])
        wall = time.perf_counter() - t0
        con = wb._engine.store.con  # noqa: SLF001 - counting rows for the report
        docs = con.execute("SELECT count(*) FROM documents").fetchone()[0]
        passages = con.execute("SELECT count(*) FROM parts").fetchone()[0]
        wb.close()
        return {
            "wall_s": wall,
            "embed_s": spent[0],
            "texts_embedded": spent[1],
            "documents": docs,
            "passages": passages,
            "failed": report.to_dict()["counts"]["failed"],
            "store_mb": size_mb(store),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fresh-store puts (median reported)")
    ap.add_argument("--label", default="", help="suffix of the results file (e.g. before)")
    ap.add_argument("--before", type=Path, help="results JSON of the run to compare with")
    args = ap.parse_args()
    if not DOCS.is_dir():
        raise SystemExit(f"{DOCS} is absent: the benchmark needs ../shared/data/docs")
    name = "bench_long_docs" + (f"-{args.label}" if args.label else "")
    rep = c.Report(name, False)
    one_put(DOCS)  # untimed: the first put pays for importing the extractors and OCR's start
    runs = [one_put(DOCS) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    n_pages = pages(DOCS)
    rep.add("wall_s_median", med["wall_s"], "s")
    walls = ", ".join(f"{r['wall_s']:.1f} s" for r in runs)
    rep.note(f"wall times: {walls}")
    rep.add("embed_s_median", med["embed_s"], "s")
    rep.add("texts_embedded", med["texts_embedded"], "texts")
    rep.add("documents", med["documents"], "docs")
    rep.add("passages", med["passages"], "passages")
    rep.add("failed", med["failed"], "files")
    rep.add("pages_and_slides", n_pages, "pages")
    rep.add("store_mb", med["store_mb"], "MB")
    rep.add("store_mb_per_1000_pages", med["store_mb"] * 1000 / n_pages, "MB")
    vectors = med["passages"] * 384 * 4 / 1e6
    rep.add("passage_vectors_mb_per_1000_pages", vectors * 1000 / n_pages, "MB")
    if args.before is not None:
        figures = json.loads(args.before.read_text())["figures"]
        rows = {k: v["value"] for k, v in figures.items()}
        ratio = med["wall_s"] / rows["wall_s_median"]
        rep.add("wall_ratio_to_before", ratio, "x", f"<= {TARGET_RATIO}", ratio <= TARGET_RATIO)
        grown = med["store_mb"] - rows["store_mb"]
        rep.add("store_growth_mb_per_1000_pages", grown * 1000 / n_pages, "MB")
        added = (med["passages"] - rows["passages"]) * 384 * 4 / 1e6  # the new passages' vectors
        rep.add("added_passage_vectors_mb_per_1000_pages", added * 1000 / n_pages, "MB")
    rep.finish()


if __name__ == "__main__":
    main()
