"""find --why ID: where a document ranked in each channel, and which step kept it out."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core import inputs
from keepui_engine.core.errors import NotFound
from keepui_engine.core.types import FindQuery
from keepui_engine.search.finding import find
from keepui_engine.search.ranking import address, lift
from keepui_engine.store.tables import keys as key_sql
from keepui_engine.store.tables import queries

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations

DEPTH = 1000


@dataclass(frozen=True)
class WhyResult:
    """The story of one document for one query.

    Attributes:
        id: The document.
        query: The query.
        mode: The search mode.
        rank: Its rank in the real result (1-based), or None when it is not shown.
        channels: channel -> {"rank", "score", "matched"} before any filter (None when the
            channel did not find it within its first 1,000 versions).
        passes: filter -> whether the document passes it (tag, time): its current version,
            or under --history / --as-of some version.
        removed_by: `tag`, `time`, `archived` (only an older version matched), `no_evidence`,
            `threshold`, `dedup`, `limit` or `not_retrieved`; None when it is shown.
        explanation: One sentence saying so.
    """

    id: str
    query: str
    mode: str
    rank: int | None
    channels: dict[str, dict[str, Any] | None]
    passes: dict[str, bool]
    removed_by: str | None
    explanation: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WhyResult:
        """Rebuild from `to_dict` output."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def why(engine: Operations, q: FindQuery, doc_id: str) -> WhyResult:
    """Explain where `doc_id` stands for a query under the given filters and limit."""
    con = engine.store.con
    doc_keys = {int(k) for k in key_sql.of_document(con, doc_id)}
    if not doc_keys:
        raise NotFound(f"no document with id {doc_id!r}. `keepui list` shows the ids.")
    query, tags, limit, since, until = q.query, q.tags, q.limit, q.since, q.until
    result = find(engine, q)
    mode = result.mode
    rank = next((i for i, h in enumerate(result.hits, 1) if h.id == doc_id), None)
    channels: dict[str, dict[str, Any] | None] = {}
    if mode != "bm25":
        from keepui_engine.search.query_vector import query_vector

        qvec = query_vector(query, engine.vectors.embed_query)
        keys, sims, _, _ = engine.store.index.search(qvec, DEPTH, None)
        channels["dense"] = _ranked(engine, keys, sims, doc_id)
    if mode != "dense":
        keys, scores = engine.fulltext.search(query, DEPTH, engine.live_keys(), None)
        channels["bm25"] = _ranked(engine, keys, scores, doc_id)
    now = datetime.now(UTC)
    filters = inputs.parse_tag_args(tags, allow_bare=True)
    current = not q.history and not q.as_of
    passes = {}
    if filters:
        tagged = queries.filter_keys(con, filters, None, None, current=current)
        passes["tag"] = bool(doc_keys & set(tagged.tolist()))
    if since or until:
        t0 = inputs.parse_time(since, now=now, option="--since") if since else None
        t1 = inputs.parse_time(until, now=now, option="--until") if until else None
        timed = queries.filter_keys(con, {}, t0, t1, current=current)
        passes["time"] = bool(doc_keys & set(timed.tolist()))
    hid = bool(result.hidden.get("no_evidence"))
    removed, text = _verdict(doc_id, rank, channels, passes, limit, hid)
    if removed in ("limit", "not_retrieved") and current:
        older = [v["matched"] for v in channels.values() if v and "@V{" in v["matched"]]
        if older and len(older) == sum(1 for v in channels.values() if v):
            removed = "archived"
            text = (
                f"{doc_id} matched only an older version ({older[0]}); find searches current "
                "versions, so it is not shown (--history searches older versions too)."
            )
    keeper = next((h for h in result.hits if doc_id in h.duplicates), None)
    if removed == "limit" and keeper is not None:
        removed = "dedup"
        text = (
            f"{doc_id} is a near-duplicate of {keeper.id} (rank {result.hits.index(keeper) + 1}), "
            "which is newer, so the near-duplicate filter folded it; --no-dedup shows it."
        )
    if removed == "limit" and result.hidden.get("threshold"):
        everything = find(engine, replace(q, min_score=float("-inf")))
        below = next((h for h in everything.hits if h.id == doc_id), None)
        if below is not None:
            removed = "threshold"
            text = f"{doc_id} scored {below.score:.4f}, below --min-score, so the threshold hid it."
    return WhyResult(doc_id, query, mode, rank, channels, passes, removed, text)


def _ranked(
    engine: Operations, keys: np.ndarray, scores: np.ndarray, doc_id: str
) -> dict[str, Any] | None:
    """The document's rank, score and matched address in one channel (as find lifts it)."""
    rows = queries.hydrate(engine.store.con, keys.tolist())
    got = lift((keys, scores), rows).get(doc_id)
    if got is None:
        return None
    row = rows[got[2]]
    matched = address(row.doc_id, row.head_version - row.version, row.part)
    return {"rank": got[0], "score": got[1], "matched": matched}


def _verdict(
    doc_id: str,
    rank: int | None,
    channels: dict[str, dict[str, Any] | None],
    passes: dict[str, bool],
    limit: int,
    evidence_hidden: bool,
) -> tuple[str | None, str]:
    if rank is not None:
        return None, f"{doc_id} is shown at rank {rank}."
    if passes.get("tag") is False:
        return (
            "tag",
            f"{doc_id} does not carry the tags asked for, so the tag filter removed it.",
        )
    if passes.get("time") is False:
        return "time", f"{doc_id} was not written in the --since/--until window."
    found = {c: v for c, v in channels.items() if v}
    if not found:
        return "not_retrieved", (
            f"no channel ranked {doc_id} among its first {DEPTH} versions for this query."
        )
    dense = channels.get("dense")
    if evidence_hidden and not channels.get("bm25") and (dense is None or dense["score"] <= 0):
        return "no_evidence", (
            f"{doc_id} contains no word of the query and its meaning is no closer than "
            "unrelated text (cosine <= 0), so it was hidden as having no evidence."
        )
    where = ", ".join(f"{c} #{v['rank']}" for c, v in found.items())
    return "limit", (
        f"{doc_id} ranked {where} before filters but fell below the limit of "
        f"{limit}; raise -n to see it."
    )
