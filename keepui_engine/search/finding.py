"""find: filters, the dense and BM25 channels, fusion, recency decay (on an open store)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core import inputs
from keepui_engine.core.errors import UsageError
from keepui_engine.core.gate import reader_opening
from keepui_engine.core.search_configs import configured
from keepui_engine.core.types import FindQuery, FindResult, Hit
from keepui_engine.search import pipeline
from keepui_engine.search.query_vector import query_vector
from keepui_engine.search.ranking import TIE, excerpt, fuse
from keepui_engine.search.retrieved import Retrieved, fused, similarities, whole_texts
from keepui_engine.store.tables import documents, pending, queries
from keepui_engine.store.tables import keys as key_sql
from keepui_engine.store.tables import parts as part_sql
from keepui_engine.store.tables.catalog import KeyCatalog

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings
    from keepui_engine.ops.ports import Operations

MODES = ("dense", "bm25", "hybrid")
FUSIONS = ("score", "share", "rrf")


def find(engine: Operations, q: FindQuery, *, first: bool = False) -> FindResult:
    """Rank documents for a query after tag and time filters, then run the recall-kit steps.

    Dense ranks by cosine similarity, BM25 by its score, hybrid by fusing both (each channel
    over-fetched 3x the limit); the final score is that times decay. Then the relevance
    threshold, the near-duplicate fold and the rerank, each counted in `hidden`; under the
    query's search configuration (`q.config`, see `search_configs`).

    Args:
        first: Nothing was read before this find (it is the whole operation): while the
            model embeds the query, before any read, an owner serves other requests.
    """
    st = configured(engine.settings, q.config)
    got = retrieve(engine, q, st, first=first)
    if isinstance(got, FindResult):
        return got
    return finish(engine, q, fused(got, q, st), got.head, got.now, got.rows, st)


def retrieve(
    engine: Operations,
    q: FindQuery,
    st: Settings,
    *,
    first: bool = False,
    every_fusion: bool = False,
) -> Retrieved | FindResult:
    """find's channels under settings `st`, before fusion (dense mode: the whole result);
    `every_fusion`: read the words' idf for rank fusion too (a sweep fuses many ways)."""
    query, limit, mode = q.query, q.limit, q.mode or st.search_mode
    fusion = q.fusion or st.fusion
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose one of {', '.join(MODES)}.")
    if fusion not in FUSIONS:
        raise UsageError(f"--fusion {fusion!r}: choose one of {', '.join(FUSIONS)}.")
    if q.rerank is not None and q.rerank not in pipeline.RERANKS:
        raise UsageError(f"--rerank {q.rerank!r}: choose one of {', '.join(pipeline.RERANKS)}.")
    if not query or not query.strip():
        raise UsageError("the query is empty: give some words to search for.")
    if limit < 1:
        raise UsageError(f"--limit {limit}: give a number of hits of 1 or more.")
    filters = inputs.parse_tag_args(q.tags, allow_bare=True)
    now_aware = datetime.now(UTC)
    t0 = inputs.parse_time(q.since, now=now_aware, option="--since") if q.since else None
    t1 = inputs.parse_time(q.until, now=now_aware, option="--until") if q.until else None
    qvec = None
    if mode != "bm25":  # before any read, so that every read below sees one state
        with reader_opening(first):
            qvec = query_vector(query, engine.vectors.embed_query)
    con = engine.store.con
    # The store answers about now: current versions (and their parts) unless the caller asks
    # about the past (--history: every version; --as-of: the versions current then).
    current = not q.history and not q.as_of
    allowed = (
        queries.filter_keys(con, filters, t0, t1, current=current) if filters or t0 or t1 else None
    )
    # DuckDB: the channels search only the current keys (one mask, cached per write), so an
    # archived version never takes a fetched slot; elsewhere `_documents` drops them.
    scope = engine.current_keys() if current and allowed is None else None
    catalog = engine.catalog()
    now = now_aware.replace(tzinfo=None)
    notes = []
    if q.as_of:
        moment = inputs.parse_moment(q.as_of)
        then = queries.as_of_keys(con, moment)
        allowed = then if allowed is None else np.intersect1d(allowed, then)
        now = min(now, moment)  # recency as it was then
        notes.append(f"as of {inputs.iso(moment)}: the versions current then")
    if pending.rebuilding(con):
        notes.append("the index is being rebuilt (keepui reindex): results may be incomplete")
    if allowed is not None and len(allowed) == 0:
        notes.append(_nothing_passes(con, filters, (q.since, t0), (q.until, t1), current))
    fetch = max(limit * 3, 30)
    method, considered = "exact", 0
    dense = None
    if qvec is not None:
        if mode == "dense":
            within = allowed if scope is None else scope
            found, rows = _dense_only(engine, q, qvec, within, now, notes, current, st)
            return finish(engine, q, found.hits, found, now, rows, st)
        got: list[object] = []

        def dense_search(k: int) -> tuple[np.ndarray, np.ndarray]:
            keys, sims, *rest = engine.store.index.search(
                qvec, k, allowed if scope is None else scope
            )
            got[:] = rest
            return keys, sims

        dense = _documents(con, dense_search, fetch, current, catalog)
        method, considered = got  # type: ignore[assignment]
    # PostgreSQL's BM25 holds postings of live versions only: no key list needed
    live = None
    if engine.fulltext.rebuildable:
        live = engine.live_keys() if scope is None else scope
    bm25 = _documents(
        con,
        lambda k: engine.fulltext.search(query, k, live, allowed),  # type: ignore[arg-type]
        fetch,
        current,
        catalog,
    )
    keys = np.unique(np.concatenate([c[0] for c in (dense, bm25) if c is not None]))
    rows = queries.hydrate(con, keys.tolist())
    if mode == "bm25":
        total = len(live) if live is not None else engine.store.index.live_count
        considered = total if allowed is None else len(allowed)
    if not st.passages:
        dense = None if dense is None else whole_texts(dense, rows)
        bm25 = whole_texts(bm25, rows)
    similarity = None
    if qvec is not None:
        similarity = similarities(engine, qvec, dense, bm25)
    idf = None
    if mode == "hybrid" and (fusion != "rrf" or every_fusion):
        idf = engine.fulltext.idf(query)
    head = FindResult(query, [], limit, considered, method, notes, mode)
    return Retrieved(dense, bm25, rows, similarity, idf, now, head)


PASSAGES_KEPT = 3  # keys a channel keeps of one document: fusion per passage weighs them


def _documents(
    con: Any,
    search: Callable[[int], tuple[np.ndarray, np.ndarray]],
    fetch: int,
    current: bool = False,
    catalog: KeyCatalog | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A channel's best keys, fetched until they hold `fetch` documents (or all there are),
    less the keys that cannot be the one a document lifts to.

    A document's versions and parts each have a key, so `fetch` keys can be far fewer
    documents. Of each document its best PASSAGES_KEPT keys are kept (fusion weighs each
    passage's two channels together), and any later key of a newer version within `TIE` of
    the best (what `search.lift` chooses from), so only those are hydrated.
    With `current`, keys of archived versions are dropped first (the store answers about now).
    `catalog`: the keys' documents in memory (DuckDB), instead of a statement per fetch.
    """
    k = fetch
    while True:
        keys, scores = search(k)
        recs = catalog.lookup(keys) if catalog is not None else key_sql.rows(con, keys.tolist())
        where = {r[0]: (r[1], r[2]) for r in recs if not current or r[2] == r[3]}
        found = len({d for d, _ in where.values()})
        if found >= fetch or len(keys) < k:
            break
        k = max(k * 2, int(k * fetch / max(found, 1) * 1.25))
    best: dict[str, tuple[float, int]] = {}
    seen: dict[str, int] = {}
    keep = []
    for i, (key, score) in enumerate(zip(keys.tolist(), scores.tolist(), strict=True)):
        if key not in where:
            continue
        doc_id, version = where[key]
        top = best.get(doc_id)
        if top is None:
            best[doc_id] = (score, version)
            keep.append(i)
        elif (top[0] - score <= TIE * max(1.0, abs(top[0])) and version > top[1]) or seen[
            doc_id
        ] < PASSAGES_KEPT:
            keep.append(i)  # a newer tie, or one of the document's next best passages
        seen[doc_id] = seen.get(doc_id, 0) + 1
    return keys[keep], scores[keep]


def _dense_only(
    engine: Operations,
    q: FindQuery,
    qvec: np.ndarray,
    allowed: np.ndarray | None,
    now: datetime,
    notes: list[str],
    current: bool,
    st: Settings,
) -> tuple[FindResult, dict[int, queries.KeyRow]]:
    """Dense mode: over-fetch until decay cannot change the top `limit` (and, with `current`,
    until enough current versions are left once archived ones are dropped)."""
    limit = q.limit
    k = max(limit * 3, 30)
    while True:
        keys, sims, method, considered = engine.store.index.search(qvec, k, allowed)
        rows = queries.hydrate(engine.store.con, keys.tolist())
        exhausted = len(keys) < k
        floor = max(float(sims[-1]), 0.0) if len(sims) else 0.0
        if current:
            keep = [i for i, key in enumerate(keys.tolist()) if _is_current(rows.get(key))]
            keys, sims = keys[keep], sims[keep]
        if not st.passages:
            keys, sims = whole_texts((keys, sims), rows)
        half_life = st.half_life_days if q.decay else 0.0
        hits = fuse((keys, sims), None, rows, now, half_life)
        if exhausted or (len(hits) >= limit and hits[limit - 1].score >= floor):
            break
        k *= 4
    return FindResult(q.query, hits, limit, considered, method, notes, "dense"), rows


def _is_current(row: queries.KeyRow | None) -> bool:
    return row is not None and row.version == row.head_version


def finish(
    engine: Operations,
    q: FindQuery,
    hits: list[Hit],
    head: FindResult,
    now: datetime,
    rows: dict[int, queries.KeyRow],
    st: Settings,
    *,
    detail: bool = True,
) -> FindResult:
    """Threshold, fold, rerank and limit, counting what each hid; `detail`: passages' places."""
    min_score = st.min_score if q.min_score is None else q.min_score
    notes, hidden = list(head.notes), dict(head.hidden)
    if not q.include_system:  # system documents and the now notes only with --all
        hits = [h for h in hits if not inputs.is_system_or_now(h.id)]
    hits, hidden["no_evidence"] = pipeline.no_evidence(hits) if not q.keep_weak else (hits, 0)
    if hidden["no_evidence"]:
        notes.append(
            f"{hidden['no_evidence']} hit(s) with no evidence for the query (no query word, "
            "and no closer in meaning than unrelated text) are hidden"
        )
    hits, hidden["threshold"] = pipeline.threshold(hits, min_score)
    if hidden["threshold"]:
        notes.append(
            f"{hidden['threshold']} hit(s) scored below --min-score {min_score} and are hidden"
        )
    if st.dedup if q.dedup is None else q.dedup:
        pool = hits[: max(q.limit * 3, 30)]
        hits, hidden["dedup"] = pipeline.dedup(
            pool, _vectors(engine, pool, rows), st.dedup_threshold
        )
        if hidden["dedup"]:
            notes.append(
                f"{hidden['dedup']} near-duplicate hit(s) folded into newer ones "
                "(--no-dedup shows them)"
            )
    hits = pipeline.rerank(
        hits,
        q.rerank or st.rerank,
        now=now,
        half_life_days=st.half_life_days,
        recency_weight=st.recency_weight,
    )
    shown = hits[: q.limit]
    if detail:
        shown = _with_parts(engine, shown, rows, q.query)
    if detail and q.history:
        shown = _mark_archived(engine, shown, rows)
    return replace(head, hits=shown, hidden=hidden, notes=notes)


def _mark_archived(
    engine: Operations, hits: list[Hit], rows: dict[int, queries.KeyRow]
) -> list[Hit]:
    """Say on each hit that matched an older version which one, of how many, and whether
    the current text differs from it."""
    head_of = {r.doc_id: r.head_version for r in rows.values()}
    out = []
    for h in hits:
        if h.version and h.id in head_of:
            head = head_of[h.id]
            number = head - h.version
            same = documents.same_text_as_head(engine.store.con, h.id, number)
            h = replace(h, archived={"version": number, "of": head, "text_differs": not same})
        out.append(h)
    return out


def _with_parts(
    engine: Operations, hits: list[Hit], rows: dict[int, queries.KeyRow], query: str
) -> list[Hit]:
    """Fill in the passage each part hit matched: its title, kind, place and an excerpt."""
    version = {(r.doc_id, r.head_version - r.version): r.version for r in rows.values()}
    at = {h.matched: (h.id, version.get((h.id, h.version), 0), h.part_index) for h in hits}
    wanted = [w for w in at.values() if w[2]]
    if not wanted:
        return hits
    found = part_sql.lookup(engine.store.con, wanted)
    out = []
    for h in hits:
        got = found.get(at[h.matched])
        if got is not None:
            title, text, position, kind = got
            part = {
                "index": h.part_index,
                "title": title,
                "kind": kind,
                "position": position,
                "span": part_sql.span_of(position),
                "excerpt": excerpt(text, query),
            }
            h = replace(h, part=part)
        out.append(h)
    return out


def _vectors(engine: Operations, hits: list[Hit], rows: dict[int, queries.KeyRow]) -> np.ndarray:
    """The stored vector of the text each hit matched (its version, or its part)."""
    key_of = {(r.doc_id, r.head_version - r.version, r.part): k for k, r in rows.items()}
    keys = [key_of.get((h.id, h.version, h.part_index), -1) for h in hits]
    return engine.store.index.vectors_for(np.asarray(keys, np.int64))


def _nothing_passes(
    con: Any,
    filters: dict[str, list[str] | None],
    since: tuple[str | None, datetime | None],
    until: tuple[str | None, datetime | None],
    current: bool,
) -> str:
    """Why no version passes the filters: the ones that match nothing on their own, else that
    each matches something but not together."""
    which = "current version" if current else "stored version"
    tried: list[tuple[str, dict[str, list[str] | None], datetime | None, datetime | None]] = []
    for key, values in filters.items():
        if values is None:
            shown = f"tag {key}"
        else:
            shown = " ".join(f"tag {key}={v}" for v in values) if values else f"tag {key}="
        tried.append((shown, {key: values}, None, None))
    if since[1] is not None or until[1] is not None:
        window = " ".join(
            f"--{name} {raw}" for name, (raw, t) in (("since", since), ("until", until)) if t
        )
        tried.append((window, {}, since[1], until[1]))
    empty = [
        shown
        for shown, tags, t0, t1 in tried
        if len(queries.filter_keys(con, tags, t0, t1, current=current)) == 0
    ]
    later = " (--history also tests older ones)" if current else ""
    if empty:
        return f"no {which} matches {', '.join(empty)}{later}"
    return (
        f"no {which} matches all the filters together, though each matches some on its own: "
        f"{', '.join(shown for shown, *_ in tried)}{later}"
    )
