"""The find pipeline's pure parts: recency decay, lifting version hits to documents, ranking."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core.inputs import iso
from keepui_engine.core.types import Hit, Tags

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.store.tables.queries import KeyRow


def decay_factor(updated: datetime, now: datetime, half_life_days: float) -> float:
    """Recency weight 0.5 ** (age_days / half_life); 1.0 when the half-life is <= 0."""
    if half_life_days <= 0:
        return 1.0
    age_days = max((now - updated).total_seconds(), 0.0) / 86400.0
    return float(0.5 ** (age_days / half_life_days))


def address(doc_id: str, offset: int, part: int = 0) -> str:
    """`ID`, `ID@V{N}` for an archived version, and `@P{N}` after either for a part."""
    at = doc_id if offset == 0 else f"{doc_id}@V{{{offset}}}"
    return f"{at}@P{{{part}}}" if part else at


def public_tags(
    tags: dict[str, list[str]],
    sys: dict[str, Any],
    created: datetime,
    updated: datetime,
    accessed: datetime | None = None,
) -> Tags:
    """User tags (a single value as a string) plus the `_`-prefixed system tags."""
    out: Tags = {k: (v[0] if len(v) == 1 else list(v)) for k, v in tags.items()}
    out.update({k: v for k, v in sys.items()})
    out["_created"] = iso(created)
    out["_updated"] = iso(updated)
    if accessed is not None:
        out["_accessed"] = iso(accessed)
    return out


Channel = tuple["np.ndarray", "np.ndarray"]


TIE = 0.005
MORE_PASSAGES = 2  # a hit's next best passages kept for context


def lift(channel: Channel | None, rows: dict[int, KeyRow]) -> dict[str, tuple[int, float, int]]:
    """doc id -> (1-based rank, score, key) of the document's best version in one channel.

    Versions scoring within TIE of the document's best (relative above 1.0, so BM25 scores
    compare alike) are tied, and the newest of them wins: a tag change leaves an archived
    version with the same text, and the hit is the current one.
    """
    out: dict[str, tuple[int, float, int]] = {}
    top: dict[str, float] = {}
    if channel is None:
        return out
    for key, score in zip(channel[0].tolist(), channel[1].tolist(), strict=True):
        row = rows.get(key)
        if row is None:
            continue
        got = out.get(row.doc_id)
        if got is None:
            out[row.doc_id] = (len(out) + 1, float(score), key)
            top[row.doc_id] = float(score)
            continue
        best = top[row.doc_id]
        if best - score <= TIE * max(1.0, abs(best)) and row.version > rows[got[2]].version:
            out[row.doc_id] = (got[0], float(score), key)
    return out


def fuse(
    dense: Channel | None,
    bm25: Channel | None,
    rows: dict[int, KeyRow],
    now: datetime,
    half_life_days: float,
    *,
    weights: tuple[float, float] = (1.0, 1.0),
    rrf_k: int = 60,
    fusion: str = "rrf",
    similarity: dict[int, float] | None = None,
    idf: np.ndarray | None = None,
    prior: float | None = None,
) -> list[Hit]:
    """One hit per document from one or both channels, best final score first.

    Dense alone ranks by cosine similarity, BM25 alone by its score, both by `fusion` (score,
    share or reciprocal rank fusion). Ranks count documents (a document's best version), and
    the final score is that times decay.

    Args:
        dense: (keys, cosine similarities) best first, or None.
        bm25: (keys, BM25 scores) best first, or None.
        rows: Catalog rows of every key in either channel.
        now: The current time (naive UTC).
        half_life_days: Recency half-life (<= 0 disables decay).
        weights: Weights of the dense and BM25 channels in the fusion.
        rrf_k: The RRF constant.
        fusion: `rrf`; or `score` / `share`: the weighted mean of the cosine (0 when negative)
            and the BM25 score converted to cosine at this query's rate (see
            `keepui_engine.search.fusion`; `share` uses 1 / the query's idf sum, the old default). A
            document the BM25 channel did not return adds 0 there.
        similarity: Cosine similarities of keys the dense channel did not return.
        idf: The idf of each distinct query word (score and share fusion).
        prior: Score fusion's prior in pseudo-documents (default `fusion.PRIOR`).
    """
    by_dense, by_bm25 = lift(dense, rows), lift(bm25, rows)
    hybrid = dense is not None and bm25 is not None
    rate = _rate(fusion, by_dense, by_bm25, idf, prior) if hybrid and fusion != "rrf" else 0.0
    best = (
        _per_passage(dense, bm25, rows, weights, rrf_k, fusion, rate, similarity or {})  # type: ignore[arg-type]
        if hybrid
        else _named(dense if dense is not None else bm25, rows, by_dense or by_bm25)
    )
    by_key = [_by_key(dense), _by_key(bm25)]  # each channel's score of every key, read once
    hits = []
    for doc_id, (base, key, named, more) in best.items():
        d, b = by_dense.get(doc_id), by_bm25.get(doc_id)
        fused = base if hybrid else None
        row, shown = rows[key], rows[named]
        decay = decay_factor(row.updated, now, half_life_days)
        cos = by_key[0].get(key) if hybrid else (d[1] if d else None)
        if cos is None:
            cos = (similarity or {}).get(key)
        words = by_key[1].get(key) if hybrid else (b[1] if b else None)
        offset = row.head_version - row.version
        scores = {
            "dense": cos,
            "dense_rank": d[0] if d else None,
            "bm25": words,
            "bm25_rank": b[0] if b else None,
            "fused": fused,
            "decay": decay,
            "final": base * decay,
        }
        hits.append(
            Hit(
                id=doc_id,
                version=offset,
                score=base * decay,
                similarity=None if cos is None else float(cos),
                decay=decay,
                summary=row.summary,
                tags=public_tags(row.tags, row.sys, row.created, row.updated),
                created=iso(row.created),
                updated=iso(row.updated),
                matched=address(doc_id, offset, shown.part),
                scores=scores,
                part={"index": shown.part, "title": None, "excerpt": ""} if shown.part else None,
                passages=[{"index": rows[k].part, "score": f * decay} for f, k in more] or None,
            )
        )
    return sorted(hits, key=lambda h: (-h.score, h.version, h.id))


def _by_key(channel: Channel | None) -> dict[int, float]:
    return (
        {} if channel is None else dict(zip(channel[0].tolist(), channel[1].tolist(), strict=True))
    )


def _per_passage(
    dense: Channel,
    bm25: Channel,
    rows: dict[int, KeyRow],
    weights: tuple[float, float],
    rrf_k: int,
    fusion: str,
    rate: float,
    similarity: dict[int, float],
) -> dict[str, tuple[float, int, int, list[tuple[float, int]]]]:
    """doc id -> (score, key, named, more): the two channels fused per key, and per document
    its best key's score, that key, the key the hit names (its best passage when it has one)
    and its next best passages of that version, (fused, key) best first.

    Each version and passage is scored on its own evidence (its cosine and its BM25) and the
    document takes its best: a document is not rewarded twice for two passages that each win
    one channel. When the whole-text key scores best, the hit still names the best passage
    of that version (if either channel returned one): that is the text to read and to hand
    over. A key the BM25 channel did not return adds 0 there; its cosine comes from
    `similarity` when the dense channel did not return it. RRF ranks keys, not documents.
    """
    cos, words = _by_key(dense), _by_key(bm25)
    d_rank = {k: i for i, k in enumerate(dense[0].tolist(), 1)}
    b_rank = {k: i for i, k in enumerate(bm25[0].tolist(), 1)}
    scored = []
    for key in cos.keys() | words.keys():
        if key not in rows:
            continue
        if fusion == "rrf":
            ranks = (d_rank.get(key), b_rank.get(key))
            fused = sum(w / (rrf_k + r) for w, r in zip(weights, ranks, strict=True) if r)
        else:
            c = cos[key] if key in cos else similarity.get(key, 0.0)
            fused = (weights[0] * max(c, 0.0) + weights[1] * words.get(key, 0.0) * rate) / sum(
                weights
            )
        scored.append((fused, key))
    scored.sort(key=lambda s: (-s[0], s[1]))
    best: dict[str, tuple[float, int]] = {}
    passages: dict[tuple[str, int], list[tuple[float, int]]] = {}  # of a version, best first
    for fused, key in scored:
        row = rows[key]
        if row.part:
            passages.setdefault((row.doc_id, row.version), []).append((fused, key))
        top = best.get(row.doc_id)
        if top is None or (
            top[0] - fused <= TIE * max(1.0, abs(top[0])) and row.version > rows[top[1]].version
        ):
            best[row.doc_id] = (top[0] if top else fused, key)
    return {
        doc_id: _entry(score, key, rows[key], passages.get((doc_id, rows[key].version), []))
        for doc_id, (score, key) in best.items()
    }


def _entry(
    score: float, key: int, row: KeyRow, passages: list[tuple[float, int]]
) -> tuple[float, int, int, list[tuple[float, int]]]:
    """(score, key, named, more) of a document whose best key is `key`: it names that key when
    it is a passage, else the version's best passage (`passages`, best first) if there is one."""
    named = key if row.part or not passages else passages[0][1]
    return score, key, named, [(f, k) for f, k in passages if k != named][:MORE_PASSAGES]


def _named(
    channel: Channel | None, rows: dict[int, KeyRow], lifted: dict[str, tuple[int, float, int]]
) -> dict[str, tuple[float, int, int, list[tuple[float, int]]]]:
    """One channel's documents as `_per_passage` gives them: (score, key, named, more), where a
    whole-text win names that version's best passage the channel returned, as in hybrid."""
    found: dict[tuple[str, int], list[tuple[float, int]]] = {}
    if channel is not None:
        for key, score in zip(channel[0].tolist(), channel[1].tolist(), strict=True):
            row = rows.get(key)
            if row is not None and row.part:
                found.setdefault((row.doc_id, row.version), []).append((float(score), key))
    return {
        doc_id: _entry(score, key, rows[key], found.get((doc_id, rows[key].version), []))
        for doc_id, (_, score, key) in lifted.items()
    }


def _rate(
    fusion: str,
    by_dense: dict[str, tuple[int, float, int]],
    by_bm25: dict[str, tuple[int, float, int]],
    idf: np.ndarray | None,
    prior: float | None = None,
) -> float:
    """Cosine per BM25 point: the idf sum's inverse (share), or the per-query rate (score)."""
    import numpy as np

    from keepui_engine.search.fusion import PRIOR, bm25_rate

    if idf is None or not len(idf) or idf.sum() <= 0:
        return 0.0
    if fusion == "share":
        return float(1.0 / idf.sum())
    dense = np.asarray(sorted((v[1] for v in by_dense.values()), reverse=True), np.float64)
    bm25 = np.asarray(sorted((v[1] for v in by_bm25.values()), reverse=True), np.float64)
    return bm25_rate(dense, bm25, idf, PRIOR if prior is None else prior)


_TERM = re.compile(r"\w{3,}")
_STOP = frozenset(("the", "and", "for", "with", "that", "this", "what", "how", "are", "was"))


def excerpt(text: str, query: str, width: int = 200) -> str:
    """About `width` characters of `text` where most of the query's words occur, else its start.

    Whitespace is collapsed, the cut falls between words, and `…` marks a cut end.
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    terms = sorted({w.lower() for w in _TERM.findall(query)} - _STOP, key=len, reverse=True)
    start = 0
    if terms:
        pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + ")", re.IGNORECASE)
        found = [(m.start(), m.group(1).lower()) for m in pattern.finditer(flat)]
        best, lo = 0, 0
        for hi in range(len(found)):
            while found[hi][0] - found[lo][0] > width * 3 // 4:
                lo += 1
            distinct = len({t for _, t in found[lo : hi + 1]})
            if distinct > best:
                best, start = distinct, max(found[lo][0] - width // 5, 0)
    end = min(start + width, len(flat))
    start = max(end - width, 0)
    if start > 0:
        space = flat.find(" ", start, start + 20)
        start = space + 1 if space >= 0 else start
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space >= 0 else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")
