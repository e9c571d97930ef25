"""After retrieval, the recall-kit steps: no evidence, threshold, near-duplicate fold, rerank.

Each step is pure: it takes ranked hits and returns the hits it keeps plus how many it hid, so
find can count them and `--why` can name the step that removed a document.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from keepui_engine.core.errors import UsageError
from keepui_engine.search.ranking import decay_factor

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.core.types import Hit

RERANKS = ("relevance", "recency", "mix")


def has_evidence(hit: Hit) -> bool:
    """Whether some channel found evidence: a query word (BM25) or a positive cosine."""
    bm25 = hit.scores.get("bm25")
    cos = hit.similarity if hit.similarity is not None else hit.scores.get("dense")
    return hit.score > 0 and ((bm25 or 0) > 0 or (cos or 0) > 0)


def no_evidence(hits: list[Hit]) -> tuple[list[Hit], int]:
    """Drop hits no channel found evidence for (their final score is 0 under score fusion).

    A dense channel returns its nearest vectors however far they are, and a text whose
    cosine with the query is negative shares nothing with it; rank fusion would still give
    it a score from its rank alone.
    """
    kept = [h for h in hits if has_evidence(h)]
    return kept, len(hits) - len(kept)


def threshold(hits: list[Hit], min_score: float | None) -> tuple[list[Hit], int]:
    """Keep hits whose final score is at least `min_score`; return them and how many went.

    Raises:
        UsageError: `min_score` is NaN, which no score reaches: every hit would go unsaid
            (the CLI refuses it at the option; MCP, the TUI and the library arrive here).
    """
    if min_score is None:
        return hits, 0
    if math.isnan(min_score):
        raise UsageError("--min-score nan: give a number, e.g. 0.2 (or leave it out).")
    kept = [h for h in hits if h.score >= min_score]
    return kept, len(hits) - len(kept)


def dedup(hits: list[Hit], vectors: np.ndarray, cutoff: float) -> tuple[list[Hit], int]:
    """Fold near-duplicates: of hits whose vectors have cosine > `cutoff`, keep the newest.

    Hits are visited best first; a hit close to one already kept joins that group. The group
    is shown by its most recently updated member, with that member's own scores, and lists the
    ids folded into it in `duplicates`.

    Args:
        hits: Ranked hits, best first.
        vectors: Unit vectors of the matched text of each hit, row i for hits[i].
        cutoff: Cosine similarity above which two hits are the same note.

    Returns:
        The kept hits in ranking order and the number folded.
    """
    if len(hits) < 2:
        return hits, 0
    import numpy as np

    close = (vectors @ vectors.T) > cutoff
    group_of = np.full(len(hits), -1)
    groups: list[list[int]] = []
    for i in range(len(hits)):
        near = group_of[:i][close[i, :i]]
        if len(near):
            home = int(near.min())  # the earliest group with a member this close
            groups[home].append(i)
            group_of[i] = home
        else:
            group_of[i] = len(groups)
            groups.append([i])
    kept = []
    for group in groups:
        newest = max(group, key=lambda i: (hits[i].updated, -i))
        folded = [hits[i].id for i in group if i != newest]
        hit = hits[newest]
        kept.append(replace(hit, duplicates=hit.duplicates + folded) if folded else hit)
    kept.sort(key=lambda h: (-h.score, h.version, h.id))
    return kept, len(hits) - len(kept)


def rerank(
    hits: list[Hit], how: str, *, now: datetime, half_life_days: float, recency_weight: float
) -> list[Hit]:
    """Order hits by relevance (final score), recency (newest first) or a weighted mix.

    `mix` scores each hit (1 - w) x final / best final + w x 0.5 ** (age / half-life) and
    records it as `scores.rerank`; the other orders keep `score` = `scores.final`.
    """
    if how not in RERANKS:
        raise UsageError(f"--rerank {how!r}: choose one of {', '.join(RERANKS)}.")
    if how == "relevance" or not hits:
        return hits
    if how == "recency":
        return sorted(hits, key=lambda h: (h.updated, h.score), reverse=True)
    top = max(h.score for h in hits) or 1.0
    half_life = half_life_days if half_life_days > 0 else 30.0
    mixed = []
    for h in hits:
        fresh = decay_factor(datetime.fromisoformat(h.updated.rstrip("Z")), now, half_life)
        value = (1 - recency_weight) * h.score / top + recency_weight * fresh
        mixed.append(replace(h, score=value, scores={**h.scores, "rerank": value}))
    return sorted(mixed, key=lambda h: (-h.score, h.id))
