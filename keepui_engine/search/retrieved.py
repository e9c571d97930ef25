"""What find's two channels returned for one query, and its fusion under given settings.

Kept apart from the fusion so that one retrieval can be fused many ways (the optimizer's
sweep over fusion kinds, weights and priors) with the same result find would give.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from keepui_engine.search.ranking import fuse

if TYPE_CHECKING:
    from datetime import datetime

    import numpy as np

    from keepui_engine.core.config import Settings
    from keepui_engine.core.types import FindQuery, FindResult, Hit
    from keepui_engine.ops.ports import Operations
    from keepui_engine.search.ranking import Channel
    from keepui_engine.store.tables.queries import KeyRow


@dataclass(frozen=True)
class Retrieved:
    """One query's channels before fusion (hybrid or BM25 mode).

    Attributes:
        dense: The dense channel's (keys, cosines), best first; None in BM25 mode.
        bm25: The BM25 channel's (keys, scores), best first.
        rows: Catalog rows of every key in either channel.
        similarity: Cosines of BM25 keys the dense channel did not return.
        idf: The idf of each distinct query word; None when no fusion needs it.
        now: The moment recency is counted from (naive UTC).
        head: The result without hits: its notes, what was considered and how.
    """

    dense: Channel | None
    bm25: Channel
    rows: dict[int, KeyRow]
    similarity: dict[int, float] | None
    idf: np.ndarray | None
    now: datetime
    head: FindResult


def fused(got: Retrieved, q: FindQuery, st: Settings) -> list[Hit]:
    """The hits of a retrieval, fused and decayed as `st` (and the query's own fusion) say."""
    fusion = q.fusion or st.fusion
    return fuse(
        got.dense,
        got.bm25,
        got.rows,
        got.now,
        st.half_life_days if q.decay else 0.0,
        weights=st.fusion_weights,
        rrf_k=st.rrf_k,
        fusion=fusion,
        similarity=got.similarity,
        idf=got.idf if fusion != "rrf" else None,
        prior=st.fusion_prior,
    )


def whole_texts(channel: Channel, rows: dict[int, KeyRow]) -> Channel:
    """A channel without its passages' keys (`passages = false`: documents rank by their
    whole text alone)."""
    keep = [i for i, key in enumerate(channel[0].tolist()) if key in rows and not rows[key].part]
    return channel[0][keep], channel[1][keep]


def similarities(
    engine: Operations, qvec: np.ndarray, dense: Channel | None, bm25: Channel
) -> dict[int, float] | None:
    """Cosine similarities of the BM25 keys the dense channel did not return."""
    import numpy as np

    extra = np.setdiff1d(bm25[0], dense[0]) if dense is not None else bm25[0]
    if not len(extra):
        return None
    sims = engine.store.index.vectors_for(extra) @ qvec
    return dict(zip(extra.tolist(), sims.tolist(), strict=True))
