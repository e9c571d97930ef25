"""Result signals the rules route on: margin, entropy, lineage and facets of a ranked list."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

# Scores are keepui's final scores (cosine-scale, 0..1), not ranks: a gap of 0.05 between two
# hits is already a clear preference, so entropy weighs hits by exp((s - s1) / T).
TEMPERATURE = 0.05


def margin(scores: Sequence[float]) -> float:
    """How far the best score leads the second, relative to the best: 0 (tie) .. 1.

    One result is a clear winner (1.0); none is no winner (0.0).
    """
    if not scores:
        return 0.0
    ordered = sorted(scores, reverse=True)
    if len(ordered) == 1:
        return 1.0
    s1, s2 = ordered[0], ordered[1]
    return min(max((s1 - s2) / max(abs(s1), 1e-9), 0.0), 1.0)


def entropy(scores: Sequence[float], temperature: float = TEMPERATURE) -> float:
    """How evenly the results share the relevance: 0 (one stands out) .. 1 (all alike).

    The Shannon entropy of softmax(score / temperature) over ln(n); n <= 1 gives 0.
    """
    n = len(scores)
    if n <= 1:
        return 0.0
    top = max(scores)
    weights = [math.exp((s - top) / max(temperature, 1e-6)) for s in scores]
    total = sum(weights)
    h = -sum((w / total) * math.log(w / total) for w in weights if w > 0)
    return min(max(h / math.log(n), 0.0), 1.0)


def family(doc_id: str) -> str | None:
    """The lineage root of an id: the folder of a file or URL; None for plain notes."""
    base = doc_id.split("@", 1)[0]
    if "/" not in base:
        return None
    root = base.rsplit("/", 1)[0]
    return root or None


def lineage(results: Sequence[dict[str, Any]]) -> tuple[float, str | None, list[str]]:
    """The share of results from the most common family, that family, and its shared tags.

    A family must hold two or more results to count (otherwise 0.0, None, []). The shared
    tags are the user tags (`k=v`) every result of that family carries.
    """
    roots = [family(str(r.get("id", ""))) for r in results]
    counts = Counter(r for r in roots if r is not None)
    if not counts:
        return 0.0, None, []
    root, count = counts.most_common(1)[0]
    if count < 2:
        return 0.0, None, []
    members = [r for r, fam in zip(results, roots, strict=True) if fam == root]
    shared = set(_pairs(members[0]))
    for m in members[1:]:
        shared &= set(_pairs(m))
    return count / len(results), root, sorted(shared)


def top_facets(results: Sequence[dict[str, Any]], limit: int = 3, window: int = 5) -> list[str]:
    """Up to `limit` user tags (`k=v`) that split the top `window` results, most frequent first.

    A facet must be carried by two or more of them but not by all: a tag every top result
    shares cannot tell them apart, so branching on it would repeat the search.
    """
    top = list(results[:window])
    counts = Counter(p for r in top for p in set(_pairs(r)))
    ranked = sorted((c, p) for p, c in counts.items() if 2 <= c < len(top))
    ranked.sort(key=lambda cp: (-cp[0], cp[1]))
    return [p for _, p in ranked[:limit]]


def _pairs(result: dict[str, Any]) -> list[str]:
    tags = result.get("tags") or {}
    out = []
    for key, value in tags.items():
        if key.startswith("_"):
            continue
        for v in value if isinstance(value, list) else [value]:
            out.append(f"{key}={v}")
    return out


def summarize(
    results: Sequence[dict[str, Any]], temperature: float = TEMPERATURE
) -> dict[str, Any]:
    """Every signal of a result list, as the find action adds them to its output."""
    scores = [float(r.get("score") or 0.0) for r in results]
    strong, root, tags = lineage(results)
    return {
        "count": len(results),
        "top_score": max(scores) if scores else 0.0,
        "margin": round(margin(scores), 4),
        "entropy": round(entropy(scores, temperature), 4),
        "lineage_strong": round(strong, 4),
        "dominant_lineage": root,
        "dominant_lineage_tags": tags,
        "top_facet_tags": top_facets(results),
    }
