"""Contextual summarization: the summaries of the items most like this one that share its tags.

As the keep design describes it: candidates are current documents sharing at least one user
tag (key and value) with the item; each is scored by the cosine similarity of their vectors,
and every shared tag beyond the first adds 20% (similarity x (1 + 0.2 x (shared - 1))). The
five best give their summaries to an LLM summarizer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from keepui_engine.store.tables import documents
from keepui_engine.store.tables import keys as key_sql

if TYPE_CHECKING:
    import duckdb

    from keepui_engine.store.protocol import VectorSearch


TOP = 5
BONUS = 0.2


def tag_pairs(tags: dict[str, list[str]]) -> set[tuple[str, str]]:
    """(key, value) pairs of user tags."""
    return {(k, v) for k, values in tags.items() for v in values}


def rank(
    similarity: dict[str, float], shared: dict[str, int], top: int = TOP
) -> list[tuple[str, float]]:
    """Ids by similarity x (1 + 0.2 x (shared tags - 1)), best first, at most `top`."""
    scored = [(i, s * (1 + BONUS * (shared[i] - 1))) for i, s in similarity.items() if shared[i]]
    return sorted(scored, key=lambda t: (-t[1], t[0]))[:top]


def context_for(
    con: duckdb.DuckDBPyConnection, index: VectorSearch, doc_id: str, top: int = TOP
) -> list[str]:
    """Summaries of the items most similar to `doc_id` among those sharing its user tags."""
    tags = documents.tags_of(con, doc_id)
    if tags is None:
        return []
    mine = tag_pairs(json.loads(tags))
    if not mine:
        return []
    shared: dict[str, int] = {}
    summaries: dict[str, str] = {}
    for other, theirs, summary in documents.others_tags(con, doc_id):
        n = len(mine & tag_pairs(json.loads(theirs)))
        if n:
            shared[other], summaries[other] = n, summary
    if not shared:
        return []
    ids = [doc_id, *shared]
    keys = key_sql.whole_text(con, ids)
    if doc_id not in keys:
        return []
    order = [d for d in ids if d in keys]
    vecs = index.vectors_for(np.asarray([keys[d] for d in order], np.int64))
    sims = vecs[1:] @ vecs[0]
    similarity = {d: float(s) for d, s in zip(order[1:], sims.tolist(), strict=True)}
    return [summaries[d] for d, _ in rank(similarity, shared, top)]
