"""One query of an experiment scored again, after its judgments changed (the workbench's
side-by-side view judges hits in place and shows the experiment with that query re-scored)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from keepui_engine.client.tuning import metrics as m
from keepui_engine.client.tuning.experiments import POOL_DEPTH, aggregate, rankings
from keepui_engine.search.judgments import qid

if TYPE_CHECKING:
    from keepui_engine.client.tuning.experiments import Experiment
    from keepui_engine.client.workbench import Workbench


def rescore(wb: Workbench, exp: Experiment, query: str) -> Experiment:
    """`exp` with `query` ranked again under each configuration and scored on the store's
    judgments as they are now; the means, intervals and paired tests follow. Not stored:
    running the experiment again stores a new one.

    A query left without judgments drops out of the scored queries (and a query newly
    judged joins them, last).

    Raises:
        UsageError: No query of the experiment would have judgments left.
    """
    key = qid(query)
    ranked = rankings(wb, [query], exp.configs, exp.depth)
    grades = {j.id: j.grade for j in wb.judgments(query)}
    per_query = dict(exp.per_query)
    if grades:
        scored = {
            c: m.per_query({key: ranked[c][key]}, {key: grades}, exp.metrics)[key]
            for c in exp.configs
        }
        per_query[key] = {"query": query, "scores": scored}
    else:
        per_query.pop(key, None)
    scores, intervals, paired = aggregate(exp.configs, exp.metrics, per_query)
    unjudged = {
        c: {
            **exp.unjudged.get(c, {}),
            key: [i for i in ranked[c][key][:POOL_DEPTH] if i not in grades],
        }
        for c in exp.configs
    }
    return replace(
        exp,
        judged=len(per_query),
        scores=scores,
        intervals=intervals,
        paired=paired,
        per_query=per_query,
        unjudged=unjudged,
    )
