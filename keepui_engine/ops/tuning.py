"""Tuning operations: judgments recorded in bulk, and one retrieval fused many ways.

Each is called as `function(engine, **args)` through ops.registry. The sweep is what makes
the optimizer cheap: a query's two channels are read once and every grid point (a fusion
kind, channel weights, score fusion's prior) re-fuses them in memory, through the same
fusion and steps as find, so a grid point ranks exactly as `find --config` would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from keepui_engine.core.search_configs import apply, check, configured
from keepui_engine.core.types import FindQuery
from keepui_engine.search import judgments
from keepui_engine.search.finding import finish, retrieve
from keepui_engine.search.retrieved import Retrieved, fused

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations


def judge_many(engine: Operations, rows: list[list[Any]]) -> dict[str, Any]:
    """Record judgments `[query, id, grade]` in one transaction: {"recorded": how many,
    "missing": the ids the store does not have (their judgments are not recorded)}.

    Raises:
        UsageError: A grade outside 0..3 or an empty query; nothing is recorded.
    """
    triples = [(str(q), str(d), int(g)) for q, d, g in rows]
    with engine.store.transaction():
        recorded, missing = judgments.record_many(engine.store.con, triples)
    return {"recorded": recorded, "missing": missing}


def sweep(
    engine: Operations,
    queries: list[str],
    grid: list[dict[str, Any]],
    depth: int = 10,
    limit: int = 100,
    config: str | None = None,
) -> list[list[list[str]]]:
    """The ids each grid point ranks first for each query, hybrid mode, the fold off.

    Args:
        queries: The query texts.
        grid: Search configuration values (fusion, dense_weight, bm25_weight, score_prior,
            rrf_k …), each laid over configuration `config`.
        depth: Ids kept per ranking.
        limit: The find limit the channels are read for (it sets how many documents each
            channel fetches: keep it as the experiments' so the rankings agree).
        config: The configuration the grid points change (None: [search]).

    Returns:
        [grid point][query] -> ids, best first.

    Raises:
        UsageError: An unknown configuration; a grid value a configuration cannot take.
    """
    base = configured(engine.settings, config)
    points = [apply(base, check(point, f"grid point {n}")) for n, point in enumerate(grid, 1)]
    out: list[list[list[str]]] = [[] for _ in points]
    for text in queries:
        q = FindQuery(text, limit=limit, mode="hybrid", dedup=False, config=config)
        got = retrieve(engine, q, base, every_fusion=True)
        assert isinstance(got, Retrieved)  # hybrid mode
        for ranked, st in zip(out, points, strict=True):
            hits = fused(got, q, st)
            shown = finish(engine, q, hits, got.head, got.now, got.rows, st, detail=False)
            ranked.append([h.id for h in shown.hits[:depth]])
    return out
