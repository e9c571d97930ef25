"""Experiment metrics: nDCG@k, P@k, MRR@k and Recall@k by trec_eval, and how much two
rankings overlap (Jaccard@k and rank-biased overlap), which needs no judgments."""

from __future__ import annotations

import re

from keepui_engine.core.errors import UsageError

DEFAULT_METRICS = ("ndcg@10", "p@5", "mrr@10", "recall@100")
KINDS = ("ndcg", "p", "mrr", "recall")
_SPEC = re.compile(r"(ndcg|p|mrr|recall)@(\d{1,4})", re.IGNORECASE)
RBO_P = 0.9


def parse_metrics(specs: list[str] | None) -> list[str]:
    """The metrics asked for, as `kind@k` in lower case, each once (default: DEFAULT_METRICS).

    Raises:
        UsageError: A metric that is not one of ndcg, p, mrr and recall at a cutoff 1..1000.
    """
    out: list[str] = []
    for spec in specs or DEFAULT_METRICS:
        m = _SPEC.fullmatch(spec.strip())
        if m is None or not 1 <= int(m.group(2)) <= 1000:
            raise UsageError(
                f"--metric {spec!r}: give KIND@K with KIND one of {', '.join(KINDS)} and K "
                "from 1 to 1000, e.g. ndcg@10, p@5, mrr@10, recall@100."
            )
        name = f"{m.group(1).lower()}@{int(m.group(2))}"
        if name not in out:
            out.append(name)
    return out


def depth(metrics: list[str]) -> int:
    """How many hits a ranking needs for these metrics (their largest cutoff, at least 10)."""
    return max([10, *(int(m.split("@")[1]) for m in metrics)])


def per_query(
    run: dict[str, list[str]], qrels: dict[str, dict[str, int]], metrics: list[str]
) -> dict[str, dict[str, float]]:
    """Each judged query's value of each metric, computed by trec_eval (pytrec_eval) as
    `keepui eval` computes its own: the ranking's order as given, an empty ranking 0.

    Args:
        run: Query id -> ranked document ids, best first (queries without judgments are
            left out).
        qrels: Query id -> document id -> grade.
        metrics: Names from `parse_metrics`.
    """
    import pytrec_eval

    judged = {q: qrels[q] for q in run if q in qrels}
    keys = {"ndcg": "ndcg_cut", "p": "P", "recall": "recall"}

    def scored(measures: set[str], cut: int | None = None) -> dict[str, dict[str, float]]:
        ranked = {
            q: {d: float(len(ids) - i) for i, d in enumerate(ids[:cut])}
            for q, ids in run.items()
            if q in judged
        }
        got = pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(ranked)
        return got  # type: ignore[no-any-return]

    cutoffs = [m.split("@") for m in metrics]
    main = scored({f"{keys[kind]}.{k}" for kind, k in cutoffs if kind != "mrr"})
    out: dict[str, dict[str, float]] = {q: {} for q in judged}
    for kind, k in cutoffs:
        if kind == "mrr":  # trec_eval's recip_rank has no cutoff: the run is cut instead
            table, key = scored({"recip_rank"}, int(k)), "recip_rank"
        else:
            table, key = main, f"{keys[kind]}_{k}"
        for q in judged:
            out[q][f"{kind}@{k}"] = float(table.get(q, {}).get(key, 0.0))
    return out


def jaccard(a: list[str], b: list[str]) -> float:
    """|A ∩ B| / |A ∪ B| of two top-k lists (1.0 when both are empty)."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def rbo(a: list[str], b: list[str], p: float = RBO_P) -> float:
    """Rank-biased overlap of two rankings, extrapolated (RBO_ext).

    Webber, Moffat and Zobel, "A similarity measure for indefinite rankings" (TOIS 2010),
    eq. 32: with S the shorter list (length s), L the longer (length l) and X_d the overlap
    of their first d items (S counted whole past s),

        RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d * p^d + sum_{d=s+1..l} X_s*(d-s)/(s*d) * p^d)
                  + ((X_l - X_s)/l + X_s/s) * p^l

    1 for identical rankings, 0 for disjoint ones; p = 0.9 puts about 86% of the weight on
    the first 10 ranks. Two empty rankings score 1, one empty ranking 0.
    """
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n = len(short), len(long_)
    seen_s: set[str] = set()
    seen_l: set[str] = set()
    overlap = 0
    x: list[int] = []  # x[d-1] = X_d
    for d in range(1, n + 1):
        item_l = long_[d - 1]
        item_s = short[d - 1] if d <= s else None
        if item_s is not None:
            overlap += (item_s in seen_l) + (item_s == item_l)
            seen_s.add(item_s)
        if item_l != item_s:
            overlap += item_l in seen_s
        seen_l.add(item_l)
        x.append(overlap)
    x_s, x_l = x[s - 1], x[n - 1]
    total = sum(x[d - 1] / d * p**d for d in range(1, n + 1))
    total += sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, n + 1))
    return (1 - p) / p * total + ((x_l - x_s) / n + x_s / s) * p**n
