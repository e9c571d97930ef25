"""The find pipeline's pure parts: recency decay, lifting version hits to documents, ranking."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.inputs import iso
from keepui_engine.types import Hit, Tags

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.store.queries import KeyRow


def decay_factor(updated: datetime, now: datetime, half_life_days: float) -> float:
    """Recency weight 0.5 ** (age_days / half_life); 1.0 when the half-life is <= 0."""
    if half_life_days <= 0:
        return 1.0
    age_days = max((now - updated).total_seconds(), 0.0) / 86400.0
    return float(0.5 ** (age_days / half_life_days))


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


def rank(
    keys: np.ndarray,
    sims: np.ndarray,
    rows: dict[int, KeyRow],
    now: datetime,
    half_life_days: float,
) -> list[Hit]:
    """Turn vector matches into one hit per document, best final score first.

    A document matched by several versions keeps its best-scoring one (the newest on ties).
    """
    best: dict[str, Hit] = {}
    for key, sim in zip(keys.tolist(), sims.tolist(), strict=True):
        row = rows.get(key)
        if row is None:
            continue
        offset = row.head_version - row.version
        decay = decay_factor(row.updated, now, half_life_days)
        hit = Hit(
            id=row.doc_id,
            version=offset,
            score=float(sim) * decay,
            similarity=float(sim),
            decay=decay,
            summary=row.summary,
            tags=public_tags(row.tags, row.sys, row.created, row.updated),
            created=iso(row.created),
            updated=iso(row.updated),
            matched=row.doc_id if offset == 0 else f"{row.doc_id}@V{{{offset}}}",
        )
        prev = best.get(row.doc_id)
        if prev is None or (hit.score, -hit.version) > (prev.score, -prev.version):
            best[row.doc_id] = hit
    return sorted(best.values(), key=lambda h: (-h.score, h.version, h.id))
