"""`keepui eval --beir`: ingest a BEIR-format collection into a scratch store (or reuse it)
and score every search mode on its queries. A client of the Workbench: it opens a store, so it
sits above the search package, whose scoring (search/evaluation.py) it uses."""

from __future__ import annotations

import json
import time
from pathlib import Path

from keepui_engine.client.settings import load_settings
from keepui_engine.client.workbench import open_workbench
from keepui_engine.core import interrupts
from keepui_engine.core.errors import Interrupted, UsageError
from keepui_engine.core.types import PutSpec
from keepui_engine.search.evaluation import (
    EvalResult,
    Progress,
    beir_files,
    fingerprint,
    load_beir,
    parse_modes,
    run_modes,
    scored,
    scratch_store,
)


def evaluate(
    corpus: Path,
    queries: Path | None = None,
    qrels: Path | None = None,
    *,
    modes: list[str] | None = None,
    store: Path | None = None,
    progress: Progress | None = None,
    batch: int = 256,
    compare: str | None = None,
    ignore_identical_ids: bool = True,
) -> EvalResult:
    """Ingest a BEIR corpus (or reuse a store built from it) and score every mode on it.

    Args:
        corpus: corpus.jsonl (`_id`, `title`, `text`), or a BEIR folder (see `beir_files`),
            whose queries.jsonl and qrels/test.tsv are used unless `queries`/`qrels` say.
        queries: queries.jsonl (`_id`, `text`).
        qrels: qrels tsv (`query-id corpus-id score`, optional header).
        modes: Modes to score (default: all three; see `parse_modes`).
        store: Store directory to use instead of the cached scratch store.
        progress: Called with (phase, done, total) as ingest and queries advance.
        batch: Documents per put batch.
        compare: The mode every other is compared with (default: hybrid).
        ignore_identical_ids: Drop a query's own id from its ranking, as BEIR's evaluator
            does by default (in ArguAna and Quora the queries are also documents).

    Queries run through the store's own find (its keepui.toml: fusion, weights, decay) with
    the near-duplicate fold off: BEIR judges every document on its own.
    """
    chosen, reference = parse_modes(modes, compare)
    if corpus.is_dir():
        corpus, queries, qrels = beir_files(corpus, queries, qrels)
    if queries is None or qrels is None:
        raise UsageError("give --queries and --qrels with a corpus file (or a BEIR folder).")
    docs, texts, judged = load_beir(corpus, queries, qrels)
    tell = progress or (lambda phase, done, total: None)
    if store is None:
        model = load_settings(None, create=False).embedding_model
        store = scratch_store(corpus, model)
    ingest_s = 0.0
    with open_workbench(store, own=True) as wb:
        marker = Path(store) / "eval.json"
        meta = {"corpus": fingerprint(corpus, wb.embedder.name), "docs": len(docs)}
        if not marker.exists() or json.loads(marker.read_text()) != meta:
            t0 = time.perf_counter()
            done = 0
            tell("ingest", 0, len(docs))
            try:
                for start in range(0, len(docs), batch):
                    chunk = docs[start : start + batch]
                    specs = [PutSpec(text, id=doc_id, source="eval") for doc_id, text in chunk]
                    try:
                        wb.put_many(specs)
                    except interrupts.Deferred:
                        done += len(chunk)  # the batch's commit had begun and finished
                        raise
                    done += len(chunk)
                    tell("ingest", done, len(docs))
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted: {done} of {len(docs)} documents ingested into {store}",
                    hint="run the same command again to continue: stored documents are kept "
                    "and skipped",
                ) from None
            ingest_s = time.perf_counter() - t0
            marker.write_text(json.dumps(meta))
        runs, timing = run_modes(wb, texts, chosen, tell, drop_own=ignore_identical_ids)
    return scored(
        EvalResult(str(store), len(docs), len(texts), {}, {}, ingest_s, runs),
        judged,
        timing,
        reference,
        "dropped" if ignore_identical_ids else "kept",
    )
