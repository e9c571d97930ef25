"""find: filters, the dense and BM25 channels, fusion, recency decay (on an open store)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from keepui_engine import inputs
from keepui_engine.errors import UsageError
from keepui_engine.search import fuse
from keepui_engine.store import documents, queries
from keepui_engine.types import FindQuery, FindResult

if TYPE_CHECKING:
    from keepui_engine.engine import Engine

MODES = ("dense", "bm25", "hybrid")


def find(engine: Engine, q: FindQuery) -> FindResult:
    """Rank documents for a query after tag and time filters.

    Dense ranks by cosine similarity, BM25 by its score, hybrid by reciprocal rank fusion of
    both (each channel over-fetched 3x the limit); the final score is that times decay.
    """
    query, tags, limit, since, until = q.query, q.tags, q.limit, q.since, q.until
    mode, min_score = q.mode, q.min_score
    mode = mode or engine.settings.search_mode
    if min_score is None:
        min_score = engine.settings.min_score
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose one of {', '.join(MODES)}.")
    if not query or not query.strip():
        raise UsageError("the query is empty: give some words to search for.")
    if limit < 1:
        raise UsageError(f"--limit {limit}: give a number of hits of 1 or more.")
    filters = inputs.parse_tag_args(tags, allow_bare=True)
    now_aware = datetime.now(UTC)
    t0 = inputs.parse_time(since, now=now_aware, option="--since") if since else None
    t1 = inputs.parse_time(until, now=now_aware, option="--until") if until else None
    con = engine.store.con
    allowed = queries.filter_keys(con, filters, t0, t1) if filters or t0 or t1 else None
    now = now_aware.replace(tzinfo=None)
    half_life = engine.settings.half_life_days
    notes = []
    if allowed is not None and len(allowed) == 0:
        notes.append("no stored version matches the tag/time filters")
    fetch = max(limit * 3, 30)
    method, considered = "exact", 0
    dense = bm25 = None
    qvec = None
    if mode != "bm25":
        qvec = engine.vectors.embed_query(query)
        if mode == "dense":
            return _threshold(
                _dense_only(engine, query, qvec, limit, allowed, now, notes), min_score, limit
            )
        keys, sims, method, considered = engine.store.index.search(qvec, fetch, allowed)
        dense = (keys, sims)
    live = documents.live_keys(con)
    bm25 = engine.fulltext.search(query, fetch, live, allowed)
    if mode == "bm25":
        considered = len(live) if allowed is None else len(allowed)
    keys = np.unique(np.concatenate([c[0] for c in (dense, bm25) if c is not None]))
    rows = queries.hydrate(con, keys.tolist())
    similarity = None
    if qvec is not None:
        extra = np.setdiff1d(bm25[0], dense[0]) if dense is not None else bm25[0]
        if len(extra):
            sims = engine.store.index.vectors_for(extra) @ qvec
            similarity = dict(zip(extra.tolist(), sims.tolist(), strict=True))
    hits = fuse(
        dense,
        bm25,
        rows,
        now,
        half_life,
        weights=engine.settings.fusion_weights,
        rrf_k=engine.settings.rrf_k,
        fusion=engine.settings.fusion,
        similarity=similarity,
    )
    return _threshold(
        FindResult(query, hits, limit, considered, method, notes, mode), min_score, limit
    )


def _dense_only(
    engine: Engine,
    query: str,
    qvec: np.ndarray,
    limit: int,
    allowed: np.ndarray | None,
    now: datetime,
    notes: list[str],
) -> FindResult:
    """Dense mode: over-fetch until decay cannot change the top `limit`."""
    k = max(limit * 3, 30)
    while True:
        keys, sims, method, considered = engine.store.index.search(qvec, k, allowed)
        rows = queries.hydrate(engine.store.con, keys.tolist())
        hits = fuse((keys, sims), None, rows, now, engine.settings.half_life_days)
        floor = max(float(sims[-1]), 0.0) if len(sims) else 0.0
        if len(keys) < k or (len(hits) >= limit and hits[limit - 1].score >= floor):
            break
        k *= 4
    return FindResult(query, hits, limit, considered, method, notes, "dense")


def _threshold(result: FindResult, min_score: float | None, limit: int) -> FindResult:
    """Drop hits whose final score is below `min_score` (counting them), then cut to `limit`."""
    hits = result.hits
    hidden = dict(result.hidden)
    notes = list(result.notes)
    if min_score is not None:
        kept = [h for h in hits if h.score >= min_score]
        hidden["threshold"] = len(hits) - len(kept)
        if hidden["threshold"]:
            notes.append(
                f"{hidden['threshold']} hit(s) scored below --min-score {min_score} and are hidden"
            )
        hits = kept
    return replace(result, hits=hits[:limit], hidden=hidden, notes=notes)
