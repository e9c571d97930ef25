"""Experiments: every query of a set under each search configuration, scored against the
store's judgments, and kept as a document so the store has a history of its quality.

A run searches through the Workbench as `find` does (the near-duplicate fold off unless a
configuration sets `dedup` itself: judgments are per document, as in `keepui eval`), scores
each judged query with trec_eval, and reports per configuration the mean of each metric with
its 95% bootstrap interval, the paired randomization test of every pair of configurations,
the queries each pair differs on most, and the unjudged documents in each top 10 (the pool to
judge next). It is stored as `.experiment/STAMP`, tagged `type=experiment`, its query set
and its configurations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.client.tuning import metrics as m
from keepui_engine.client.tuning.querysets import load as load_queryset
from keepui_engine.core import search_configs
from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.search.judgments import qid

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench
    from keepui_engine.core.types import FindResult

PREFIX = ".experiment/"
POOL_DEPTH = 10
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Experiment:
    """One experiment run (see the module docstring).

    Attributes:
        id: Its document id (`.experiment/STAMP`).
        when: When it ran (ISO-8601 UTC).
        queryset: The query set's name.
        queryset_version: The version of the query set it ran.
        configs: The configurations, the first being the reference of the paired tests.
        changes: Configuration -> the settings it changes from the default.
        metrics: The metrics, the first being the one pairs are ordered by per query.
        depth: Hits ranked per query (the metrics' largest cutoff, at least 10).
        queries: Queries in the set.
        judged: Queries with judgments: the ones scored.
        scores: Configuration -> metric -> mean over the judged queries.
        intervals: Configuration -> metric -> its 95% bootstrap interval [low, high].
        paired: For every pair, each metric: {"a", "b", "metric", "delta" (a - b), "low",
            "high", "p", "wins", "losses"} (`significance.paired_test`).
        per_query: Query id -> {"query", "scores": configuration -> metric -> value} (judged
            queries only).
        unjudged: Configuration -> query id -> the ids in its top 10 that query has no
            judgment of (every query of the set).
    """

    id: str
    when: str
    queryset: str
    queryset_version: int
    configs: list[str]
    changes: dict[str, dict[str, Any]]
    metrics: list[str]
    depth: int
    queries: int
    judged: int
    scores: dict[str, dict[str, float]]
    intervals: dict[str, dict[str, list[float]]]
    paired: list[dict[str, Any]] = field(default_factory=list)
    per_query: dict[str, dict[str, Any]] = field(default_factory=dict)
    unjudged: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def skipped(self) -> int:
        """Queries of the set without judgments (not scored)."""
        return self.queries - self.judged

    def pool(self) -> dict[str, list[str]]:
        """Query id -> the unjudged ids any configuration put in its top 10, in order."""
        out: dict[str, list[str]] = {}
        for table in self.unjudged.values():
            for q, ids in table.items():
                out.setdefault(q, [])
                out[q] += [i for i in ids if i not in out[q]]
        return {q: ids for q, ids in out.items() if ids}

    def differences(self, a: str, b: str, metric: str | None = None) -> list[dict[str, Any]]:
        """The queries where configuration `a` and `b` score differently on `metric` (default
        the first): {"qid", "query", "a", "b", "delta"}, a's wins first, by how much."""
        name = metric or self.metrics[0]
        rows = []
        for q, row in self.per_query.items():
            va, vb = row["scores"][a][name], row["scores"][b][name]
            if va != vb:
                rows.append({"qid": q, "query": row["query"], "a": va, "b": vb, "delta": va - vb})
        return sorted(rows, key=lambda r: (-r["delta"], r["qid"]))

    def record(self) -> dict[str, Any]:
        """What is stored: every field, the queries by id alone (their words are in the query
        set's version, and words stored here would count in BM25's statistics)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["per_query"] = {q: {"scores": row["scores"]} for q, row in self.per_query.items()}
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the record, the skipped count, each pair's per-query differences on
        the first metric, and the pool to judge next."""
        pairs = [
            {"a": a, "b": b, "metric": self.metrics[0], "queries": self.differences(a, b)}
            for b, a in _pairs(self.configs)
        ]
        fields_ = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**fields_, "skipped": self.skipped, "differences": pairs, "pool": self.pool()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Experiment:
        """Rebuild from `record()` or `to_dict()` (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _pairs(configs: list[str]) -> list[tuple[str, str]]:
    """(reference, other) for every pair, the earlier configuration as the reference."""
    return [
        (configs[i], configs[j]) for i in range(len(configs)) for j in range(i + 1, len(configs))
    ]


def check_configs(wb: Workbench, configs: list[str], least: int = 1) -> list[str]:
    """The configurations, checked: known, each once, at least `least`.

    Raises:
        UsageError: Too few, one twice, or one keepui.toml does not define.
    """
    if len(configs) < least:
        raise UsageError(
            f"give {'at least ' if least > 1 else ''}{least} configuration(s) with --config NAME "
            f"(known: {', '.join(search_configs.names(wb.settings))})."
        )
    if len(set(configs)) < len(configs):
        raise UsageError("give each --config once.")
    for name in configs:
        search_configs.overrides(wb.settings, name)
    return configs


def rankings(
    wb: Workbench,
    queries: list[str],
    configs: list[str],
    depth: int,
    progress: Progress | None = None,
) -> dict[str, dict[str, list[str]]]:
    """Configuration -> query id -> the ids find ranks first (at most `depth`, or the
    configuration's own limit), the fold off unless the configuration sets `dedup`."""
    tell = progress or (lambda phase, done, total: None)
    out: dict[str, dict[str, list[str]]] = {}
    with wb.session("find"):
        for name in configs:
            out[name] = {}
            tell(name, 0, len(queries))
            for n, text in enumerate(queries, 1):
                hits = ranked_find(wb, text, name, depth).hits
                out[name][qid(text)] = [h.id for h in hits]
                tell(name, n, len(queries))
    return out


def ranked_find(wb: Workbench, query: str, config: str, depth: int) -> FindResult:
    """`find` as an experiment ranks: at most `depth` hits (or the configuration's own
    limit), the near-duplicate fold off unless the configuration sets `dedup`.

    Raises:
        UsageError: No configuration has that name.
    """
    own = search_configs.overrides(wb.settings, config)
    limit = min(depth, int(own.get("limit", depth)))
    return wb.find(query, limit=limit, config=config, dedup=bool(own.get("dedup", False)))


def qrels_of(wb: Workbench) -> dict[str, dict[str, int]]:
    """Query id -> document id -> grade, of every judged query."""
    out: dict[str, dict[str, int]] = {}
    for j in wb.judgments():
        out.setdefault(j.qid, {})[j.id] = j.grade
    return out


def run(
    wb: Workbench,
    queryset: str,
    configs: list[str],
    metrics: list[str] | None = None,
    progress: Progress | None = None,
    *,
    save: bool = True,
) -> Experiment:
    """Run every query of a set under each configuration and score them (module docstring).

    Args:
        wb: The store.
        queryset: The query set's name.
        configs: Configuration names (`default` is [search]); the first is the reference.
        metrics: `kind@k` names (default nDCG@10, P@5, MRR@10, Recall@100).
        progress: Called with (configuration, done, total) as queries run.
        save: Store the result as a document.

    Raises:
        NotFound: No such query set.
        UsageError: An unknown configuration or metric, or none of the queries is judged.
    """
    configs = check_configs(wb, list(configs))
    names = m.parse_metrics(metrics)
    qs = load_queryset(wb, queryset)
    qrels = qrels_of(wb)
    judged = [q for q in qs.queries if qid(q) in qrels]
    if not judged:
        raise UsageError(
            f"none of the {len(qs.queries)} queries of {queryset} has judgments: judge some "
            "(keepui judge QUERY ID --grade N, or keepui judgments import), or use keepui "
            "experiment compare, which needs none."
        )
    depth = m.depth(names)
    ranked = rankings(wb, qs.queries, configs, depth, progress)
    table = {
        c: m.per_query({qid(q): ranked[c][qid(q)] for q in judged}, qrels, names) for c in configs
    }
    per_query = {
        qid(q): {"query": q, "scores": {c: table[c][qid(q)] for c in configs}} for q in judged
    }
    scores, intervals, paired = aggregate(configs, names, per_query)
    unjudged = {
        c: {
            qid(q): [i for i in ranked[c][qid(q)][:POOL_DEPTH] if i not in qrels.get(qid(q), {})]
            for q in qs.queries
        }
        for c in configs
    }
    when = datetime.now(UTC)
    result = Experiment(
        "",
        when.isoformat(timespec="seconds").replace("+00:00", "Z"),
        qs.name,
        qs.version,
        configs,
        {c: search_configs.changes(wb.settings, c) for c in configs},
        names,
        depth,
        len(qs.queries),
        len(judged),
        scores,
        intervals,
        paired,
        per_query,
        unjudged,
    )
    return store(wb, result, when) if save else result


def aggregate(
    configs: list[str], names: list[str], per_query: dict[str, dict[str, Any]]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[float]]], list[dict[str, Any]]]:
    """The means, their bootstrap intervals and the paired tests of every pair, from the
    per-query scores (`Experiment.per_query`, in the order the queries ran).

    Raises:
        UsageError: No query is scored.
    """
    from keepui_engine.search.significance import bootstrap_ci, paired_test

    if not per_query:
        raise UsageError("no query of the experiment has judgments left: judge some again.")
    order = list(per_query)
    table = {c: [per_query[q]["scores"][c] for q in order] for c in configs}
    scores = {c: {k: sum(v[k] for v in t) / len(t) for k in names} for c, t in table.items()}
    intervals = {
        c: {k: list(bootstrap_ci([v[k] for v in t])) for k in names} for c, t in table.items()
    }
    paired = [
        {
            "a": a,
            "b": b,
            "metric": k,
            **paired_test([v[k] for v in table[a]], [v[k] for v in table[b]]).to_dict(),
        }
        for b, a in _pairs(configs)
        for k in names
    ]
    return scores, intervals, paired


def store(wb: Workbench, result: Experiment, when: datetime) -> Experiment:
    """Store an experiment as `.experiment/STAMP` (a suffix when that is taken); it with its id."""
    from dataclasses import replace

    stamp = PREFIX + when.strftime("%Y%m%dT%H%M%SZ")
    taken = {i.id for i in wb.list_items(stamp, sort="id", limit=1000, include_system=True)}
    doc_id = stamp
    n = 1
    while doc_id in taken:
        n += 1
        doc_id = f"{stamp}-{n}"
    result = replace(result, id=doc_id)
    first = result.metrics[0]
    summary = f"experiment on {result.queryset} ({result.judged} judged queries): " + ", ".join(
        f"{c} {first} {result.scores[c][first]:.4f}" for c in result.configs
    )
    wb.put(
        json.dumps(result.record(), ensure_ascii=False, separators=(",", ":")),
        id=doc_id,
        tags=[
            "type=experiment",
            f"queryset={result.queryset}",
            *(f"config={c}" for c in result.configs),
        ],
        summary=summary,
        content_type="application/json",
    )
    return result


def load(wb: Workbench, ref: str) -> Experiment:
    """A stored experiment by id (`.experiment/STAMP` or STAMP), or `latest`.

    Raises:
        NotFound: There is none.
    """
    if ref == "latest":
        found = listing(wb)
        if not found:
            raise NotFound("no experiments yet: run keepui experiment run --queries SET ...")
        return found[-1]
    doc_id = ref if ref.startswith(PREFIX) else PREFIX + ref
    try:
        item = wb.get(doc_id)
    except NotFound:
        raise NotFound(
            f"no experiment {ref!r}; keepui experiment list shows them (ids such as "
            f"{PREFIX}20261127T101500Z, or latest)."
        ) from None
    got = Experiment.from_dict({**json.loads(item.text or "{}"), "id": item.id})
    texts = _queries_of(wb, got.queryset, got.queryset_version)
    for q, row in got.per_query.items():
        row.setdefault("query", texts.get(q, ""))
    return got


def _queries_of(wb: Workbench, name: str, version: int) -> dict[str, str]:
    """Query id -> query of a version of a query set ({} when it is gone)."""
    from keepui_engine.client.tuning.querysets import PREFIX as SETS

    try:
        head = wb.get(SETS + name)
        item = head if head.version == version else wb.get(SETS + name, head.version - version)
    except NotFound:
        return {}
    return {qid(line): line for line in (item.text or "").splitlines() if line.strip()}


def listing(wb: Workbench, queryset: str | None = None) -> list[Experiment]:
    """Stored experiments, oldest first (only those of one query set, when given)."""
    tags = ["type=experiment", *([f"queryset={queryset}"] if queryset else [])]
    items = wb.list_items(PREFIX, tags=tags, sort="id", limit=100_000, include_system=True)
    return [load(wb, i.id) for i in items]
