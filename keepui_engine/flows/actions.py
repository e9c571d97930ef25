"""Actions that need no store: pick the best branch, widen a query from its results."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from keepui_engine.core.errors import FlowError, UsageError
from keepui_engine.flows.model import FlowDoc

_WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "also",
        "among",
        "another",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "every",
        "from",
        "further",
        "have",
        "having",
        "here",
        "however",
        "into",
        "itself",
        "just",
        "like",
        "made",
        "make",
        "many",
        "might",
        "more",
        "most",
        "much",
        "must",
        "never",
        "only",
        "other",
        "ours",
        "over",
        "same",
        "should",
        "since",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "very",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "within",
        "without",
        "would",
        "your",
        "yours",
        "into",
        "onto",
        "upon",
        "used",
        "using",
        "show",
        "shows",
        "shown",
        "study",
        "studies",
        "result",
        "results",
        "based",
    ]
)


def pick(candidates: list[Any]) -> dict[str, Any]:
    """The branch whose results have the clearest winner, and all branches merged by RRF.

    Args:
        candidates: find outputs (None for branches that did not run).

    Returns:
        The best branch's output plus `label` and `merged` (every branch's results fused with
        reciprocal rank fusion, k = 60, each id once).
    """
    ran = [c for c in candidates if isinstance(c, dict) and c.get("results") is not None]
    if not ran:
        raise UsageError("pick: no branch ran; give it at least one find output.")
    best = max(ran, key=lambda c: (float(c.get("margin", 0.0)), float(c.get("top_score", 0.0))))
    fused: dict[str, float] = {}
    hit_of: dict[str, dict[str, Any]] = {}
    for c in ran:
        for rank, hit in enumerate(c["results"], start=1):
            fused[hit["id"]] = fused.get(hit["id"], 0.0) + 1.0 / (60 + rank)
            hit_of.setdefault(hit["id"], hit)
    merged = [hit_of[i] for i in sorted(fused, key=lambda i: -fused[i])]
    return {**best, "label": label(best), "merged": merged}


def label(output: dict[str, Any]) -> str:
    """A short name for a search: its tag filters, else its mode."""
    tags = output.get("tags") or []
    if tags:
        return " ".join(map(str, tags))
    mode = str(output.get("mode") or "default")
    return {"bm25": "words (bm25)", "dense": "meaning (dense)"}.get(mode, mode)


def expand(
    query: str, results: list[dict[str, Any]] | None, terms: int | None = 3
) -> dict[str, Any]:
    """Widen a query with the words that set its top results apart (pseudo-relevance feedback).

    Words are scored by how many of the top three results' summaries use them against how
    common they are across all the results, so words every hit shares do not count.

    Returns:
        {query: the widened query (unchanged when nothing qualifies), added: the words}.
    """
    results = results or []
    n_terms = 3 if terms is None else int(terms)
    have = set(_WORD.findall(query.lower()))
    top = [set(_WORD.findall(str(r.get("summary", "")).lower())) for r in results[:3]]
    every = [set(_WORD.findall(str(r.get("summary", "")).lower())) for r in results]
    df_top = Counter(w for words in top for w in words)
    df_all = Counter(w for words in every for w in words)
    n = max(len(every), 1)
    scored = [
        (df_top[w] * math.log(1 + n / df_all[w]), w)
        for w in df_top
        if w not in have and w not in STOPWORDS and df_top[w] >= min(2, len(top))
    ]
    scored.sort(key=lambda sw: (-sw[0], sw[1]))
    added = [w for _, w in scored[:n_terms]]
    return {"query": " ".join([query, *added]) if added else query, "added": added}


# The arguments each action reads from `with:`; any other key is a mistake in the state doc.
ACTION_ARGS: dict[str, tuple[str, ...]] = {
    "find": ("query", "tags", "limit", "since", "until", "mode", "min_score", "temperature"),
    "get": ("id",),
    "related": ("results", "limit"),
    "pick": ("candidates",),
    "expand": ("query", "results", "terms"),
    "get_context": ("id", "limit"),
    # writes: recorded during the tick, applied after it (see FlowHost.apply)
    "summarize": ("id", "version"),
    "tag": ("id", "tags", "remove"),
    "put": ("text", "id", "tags"),
    "analyze": ("id", "force"),
}


def check_actions(doc: FlowDoc) -> FlowDoc:
    """Raise FlowError for a rule whose `with:` gives an action an argument it does not read."""
    for n, rule in enumerate((*doc.rules, *doc.post), 1):
        known = ACTION_ARGS.get(rule.do or "")
        if known is None:
            continue
        unknown = sorted(set(rule.args) - set(known))
        if unknown:
            raise FlowError(
                f"state doc {doc.name!r}, rule {rule.id or n}: {rule.do} has no argument "
                f"{', '.join(map(repr, unknown))}; it reads {', '.join(known)}."
            )
    return doc
