"""`keepui experiment compare`: how two configurations' top k differ per query, with no
judgments needed: Jaccard@k, rank-biased overlap, the documents only one side found, and the
queries that differ most (what a person should look at first)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from keepui_engine.client.tuning.experiments import Progress, check_configs, rankings
from keepui_engine.client.tuning.metrics import RBO_P, jaccard, rbo
from keepui_engine.client.tuning.querysets import load as load_queryset
from keepui_engine.core.errors import UsageError
from keepui_engine.search.judgments import qid

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench


@dataclass(frozen=True)
class Comparison:
    """Two configurations' rankings compared query by query.

    Attributes:
        queryset: The query set's name.
        a: The first configuration.
        b: The second.
        k: The depth compared.
        jaccard: Mean Jaccard@k over the queries.
        rbo: Mean rank-biased overlap (p = 0.9, extrapolated).
        identical: Queries whose top k are the same list in the same order.
        per_query: {"qid", "query", "jaccard", "rbo", "only_a", "only_b"} per query, least
            overlap (RBO) first.
    """

    queryset: str
    a: str
    b: str
    k: int
    jaccard: float
    rbo: float
    identical: int
    per_query: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "queryset": self.queryset,
            "a": self.a,
            "b": self.b,
            "k": self.k,
            "rbo_p": RBO_P,
            "queries": len(self.per_query),
            "jaccard": self.jaccard,
            "rbo": self.rbo,
            "identical": self.identical,
            "per_query": self.per_query,
        }


def compare(
    wb: Workbench,
    queryset: str,
    configs: list[str],
    k: int = 10,
    progress: Progress | None = None,
) -> Comparison:
    """Compare the top k of two configurations on every query of a set.

    Raises:
        NotFound: No such query set.
        UsageError: Not two known configurations, or k out of 1..1000.
    """
    if not 1 <= k <= 1000:
        raise UsageError(f"-k {k}: give a depth from 1 to 1000.")
    if len(configs) != 2:
        raise UsageError("give exactly two configurations: --config A --config B.")
    a, b = check_configs(wb, list(configs), least=2)
    qs = load_queryset(wb, queryset)
    ranked = rankings(wb, qs.queries, [a, b], k, progress)
    rows: list[dict[str, Any]] = []
    for text in qs.queries:
        q = qid(text)
        ra, rb = ranked[a][q][:k], ranked[b][q][:k]
        rows.append(
            {
                "qid": q,
                "query": text,
                "jaccard": jaccard(ra, rb),
                "rbo": rbo(ra, rb),
                "only_a": [i for i in ra if i not in rb],
                "only_b": [i for i in rb if i not in ra],
            }
        )
    rows.sort(key=lambda r: (r["rbo"], r["jaccard"], r["qid"]))
    n = len(rows)
    return Comparison(
        qs.name,
        a,
        b,
        k,
        sum(r["jaccard"] for r in rows) / n,
        sum(r["rbo"] for r in rows) / n,
        sum(ranked[a][r["qid"]][:k] == ranked[b][r["qid"]][:k] for r in rows),
        rows,
    )
