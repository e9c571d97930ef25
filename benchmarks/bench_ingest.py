"""Ingest speed: `put DIR` of the shared mixed-format files and of SciFact as 5,183 text files.

In one process, an owner-mode Workbench on a fresh store with the real all-MiniLM-L6-v2
(loaded and warmed before timing), calling `Workbench.ingest([DIR])` exactly as
`keepui put DIR` does. Reported: files/s and MB/s, and the wall time split into embedding
(time inside the embedder, parts included), extraction (read + extract + OCR, timed around
`ingesting.prepare`) and the rest (storage: DuckDB writes, BM25 terms, vector index).
Target: extraction + storage under 25% of the wall time.

The shared files include one scanned page that is OCRed inline (tesseract, when installed),
so that set's extraction share is dominated by OCR; the SciFact set is the plain-text case.

Run: .venv/bin/python benchmarks/bench_ingest.py [--quick]
  --quick    the first 1,000 SciFact documents
Writes benchmarks/results/bench_ingest.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c

SHARED = c.REPO.parent / "shared" / "data"
TARGET_SHARE = 0.25


def write_scifact(dest: Path, limit: int | None) -> int:
    """SciFact's corpus as one text file per document (title, blank line, abstract)."""
    corpus = SHARED / "beir" / "scifact" / "corpus.jsonl"
    n = 0
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            sub = dest / doc["_id"][-2:]
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"{doc['_id']}.txt").write_text(f"{doc['title']}\n\n{doc['text']}\n")
            n += 1
            if limit and n >= limit:
                break
    return n


def run_set(rep: c.Report, label: str, folder: Path) -> None:
    from keepui_engine import Workbench
    from keepui_engine.client.settings import load_settings
    from keepui_engine.ingest import ingesting

    size_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    with tempfile.TemporaryDirectory(prefix="keepui-bench-ingest-") as tmp:
        store = Path(tmp) / "store"
        settings = load_settings(store)
        emb = c.TimedEmbedder(c.default_embedder(store))
        wb = Workbench(settings, own=True, embedder=emb)
        wb.warm_up()
        emb.seconds = 0.0
        extract_s = [0.0]
        original = ingesting.prepare

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                extract_s[0] += time.perf_counter() - t0

        ingesting.prepare = timed  # type: ignore[assignment]
        try:
            t0 = time.perf_counter()
            report = wb.ingest([str(folder)])
            wall = time.perf_counter() - t0
        finally:
            ingesting.prepare = original  # type: ignore[assignment]
        parts = wb._engine.store.con.execute("SELECT count(*) FROM parts").fetchone()[0]  # noqa: SLF001
        wb.close()
    counts = report.to_dict()["counts"]
    files = counts["indexed"] + counts["unchanged"]
    other = max(wall - emb.seconds - extract_s[0], 0.0)
    share = (extract_s[0] + other) / wall
    rep.add(f"{label}_files", files, "files")
    rep.add(f"{label}_failed", counts["failed"], "files")
    rep.add(f"{label}_parts", parts, "parts")
    rep.add(f"{label}_wall_s", wall, "s")
    rep.add(f"{label}_files_per_s", files / wall, "files/s")
    rep.add(f"{label}_mb_per_s", size_mb / wall, "MB/s")
    rep.add(f"{label}_embedding_share", emb.seconds / wall, "")
    rep.add(f"{label}_extraction_share", extract_s[0] / wall, "")
    rep.add(f"{label}_storage_share", other / wall, "")
    rep.add(
        f"{label}_extraction_plus_storage_share",
        share,
        "",
        f"< {TARGET_SHARE}",
        share < TARGET_SHARE,
    )
    for e in report.failed:
        rep.note(f"{label}: failed {e.source}: {e.reason}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 SciFact documents")
    args = ap.parse_args()
    rep = c.Report("bench_ingest", args.quick)
    docs = SHARED / "docs"
    if not docs.is_dir():
        raise SystemExit(f"{docs} is absent: the benchmark needs ../shared/data")
    run_set(rep, "shared_docs", docs)
    with tempfile.TemporaryDirectory(prefix="keepui-bench-scifact-") as tmp:
        folder = Path(tmp) / "scifact"
        n = write_scifact(folder, 1000 if args.quick else None)
        rep.note(f"SciFact written as {n} text files")
        run_set(rep, "scifact_files", folder)
        shutil.rmtree(folder, ignore_errors=True)
    rep.note(f"tesseract installed: {shutil.which('tesseract') is not None}")
    rep.finish()


if __name__ == "__main__":
    main()
