"""`keepui experiment optimize`: search hybrid fusion's settings on the judged queries of a set,
and say honestly what it gains, by k-fold cross-validation.

The grid: fusion kind (score, share, rrf) x the dense/BM25 weight ratio (1/4 .. 4, log
spaced) x, for score fusion, its prior (1 .. 30 pseudo-documents; see search/fusion.py). Each
query's channels are read once and re-fused for every point (the `sweep` operation), through
find's own fusion and steps. The queries are dealt into folds (seeded, so a run repeats);
for each fold the point with the best mean nDCG@10 on the other folds is scored on it. The
figure reported is that held-out nDCG@10, never a training score, with its bootstrap
interval, beside the default configuration's on the same queries and the paired test of the
two. A gain whose interval spans 0 is reported as none. The point best on all judged
queries is the configuration proposed (and written with `save`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from keepui_engine.client.tuning import metrics as m
from keepui_engine.client.tuning.experiments import Progress, qrels_of, rankings
from keepui_engine.client.tuning.querysets import load as load_queryset
from keepui_engine.core import search_configs
from keepui_engine.core.errors import UsageError
from keepui_engine.search.judgments import qid

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench

FUSIONS = ("score", "share", "rrf")
RATIOS = (0.25, 0.354, 0.5, 0.707, 1.0, 1.414, 2.0, 2.828, 4.0)
PRIORS = (1.0, 3.0, 10.0, 30.0)
METRIC = "ndcg@10"
LIMIT = 100  # hits a find ranks in `experiment run` (its Recall@100): the channels match it
PER_FOLD = 2
SEED = 15
BATCH = 8  # queries per sweep call: an owner serves other requests between them


@dataclass(frozen=True)
class Optimization:
    """What the optimizer found (see the module docstring).

    Attributes:
        queryset: The query set's name.
        folds: Folds of the cross-validation.
        seed: The seed that dealt the queries into folds.
        judged: Judged queries (all of them are held out once).
        points: Grid points searched.
        metric: What was optimised (nDCG@10).
        heldout: Mean held-out nDCG@10 of the cross-validated choice.
        heldout_ci: Its 95% bootstrap interval.
        default: The default configuration's mean nDCG@10 on the same queries.
        default_ci: Its interval.
        paired: The held-out choice against the default: delta, low, high, p, wins, losses.
        verdict: `gain`, `loss`, or `none` when the interval of the difference spans 0.
        best: The point best on every judged query: the configuration proposed.
        changes: What `best` changes from the default.
        chosen: Per fold: {"fold", "queries", "config" (the point chosen on the other
            folds), "heldout" (its mean on this fold)}.
        saved: The configuration name `best` was written as, or None.
    """

    queryset: str
    folds: int
    seed: int
    judged: int
    points: int
    metric: str
    heldout: float
    heldout_ci: list[float]
    default: float
    default_ci: list[float]
    paired: dict[str, float | int]
    verdict: str
    best: dict[str, Any]
    changes: dict[str, Any]
    chosen: list[dict[str, Any]] = field(default_factory=list)
    saved: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        from dataclasses import fields

        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**out, "gain": self.paired["delta"] if self.verdict == "gain" else None}


def grid(st: Any) -> list[dict[str, Any]]:
    """Every point searched; the one matching the default's fusion settings first (so a tie
    keeps the default)."""
    points = [
        {"fusion": fusion, "dense_weight": r, "bm25_weight": 1.0}
        | ({"score_prior": prior} if prior is not None else {})
        for fusion in FUSIONS
        for r in RATIOS
        for prior in (PRIORS if fusion == "score" else (None,))
    ]
    dense, bm25 = st.fusion_weights
    here = {"fusion": st.fusion, "dense_weight": round(dense / bm25, 3) if bm25 else None}
    if st.fusion == "score":
        here["score_prior"] = st.fusion_prior
    first = [p for p in points if all(p.get(k) == v for k, v in here.items())]
    return first + [p for p in points if p not in first]


def folds_of(qids: list[str], folds: int, seed: int) -> dict[str, int]:
    """Query id -> its fold: the ids sorted, shuffled by `seed`, dealt round."""
    import numpy as np

    order = sorted(qids)
    perm = np.random.default_rng(seed).permutation(len(order))
    return {order[int(i)]: pos % folds for pos, i in enumerate(perm)}


def optimize(
    wb: Workbench,
    queryset: str,
    folds: int = 5,
    seed: int = SEED,
    save: str | None = None,
    progress: Progress | None = None,
) -> Optimization:
    """Cross-validate the grid on the set's judged queries (module docstring).

    Raises:
        NotFound: No such query set.
        UsageError: Fewer than 2 folds, fewer judged queries than 2 per fold, or a bad
            `save` name.
        ConfigError: `save` could not write keepui.toml.
    """
    import numpy as np

    from keepui_engine.search.significance import bootstrap_ci, paired_test

    if folds < 2:
        raise UsageError(f"--folds {folds}: cross-validation needs 2 folds or more.")
    if save is not None:
        search_configs.save_check(wb.settings, save)
    qs = load_queryset(wb, queryset)
    qrels = qrels_of(wb)
    judged = [q for q in qs.queries if qid(q) in qrels]
    if len(judged) < PER_FOLD * folds:
        fewer = len(judged) // PER_FOLD
        instead = f", or --folds {fewer}" if fewer >= 2 else ""
        raise UsageError(
            f"{queryset} has {len(judged)} judged quer{'y' if len(judged) == 1 else 'ies'}; "
            f"--folds {folds} needs at least {PER_FOLD * folds} ({PER_FOLD} per fold). Judge "
            f"more of its queries (keepui judge, keepui judgments import){instead}."
        )
    tell = progress or (lambda phase, done, total: None)
    ids = [qid(q) for q in judged]
    base = rankings(wb, judged, [search_configs.DEFAULT], LIMIT, progress)
    default = m.per_query(base[search_configs.DEFAULT], qrels, [METRIC])
    points = grid(wb.settings)
    runs: list[dict[str, list[str]]] = [{} for _ in points]
    with wb.session("sweep"):
        tell("sweep", 0, len(judged))
        for start in range(0, len(judged), BATCH):
            batch = judged[start : start + BATCH]
            got = wb.call("sweep", queries=batch, grid=points, depth=10, limit=LIMIT)
            for run, ranked in zip(runs, got, strict=True):
                run.update({qid(q): r for q, r in zip(batch, ranked, strict=True)})
            tell("sweep", start + len(batch), len(judged))
    table = np.asarray(
        [[s[q][METRIC] for q in ids] for s in (m.per_query(r, qrels, [METRIC]) for r in runs)]
    )
    base_scores = np.asarray([default[q][METRIC] for q in ids])
    fold = np.asarray([folds_of(ids, folds, seed)[q] for q in ids])
    heldout = np.empty(len(ids))
    chosen = []
    for f in range(folds):
        out = fold == f
        pick = int(np.argmax(table[:, ~out].mean(axis=1)))
        heldout[out] = table[pick, out]
        chosen.append(
            {
                "fold": f + 1,
                "queries": int(out.sum()),
                "config": points[pick],
                "heldout": float(table[pick, out].mean()),
            }
        )
    best = points[int(np.argmax(table.mean(axis=1)))]
    test = paired_test(heldout.tolist(), base_scores.tolist())
    verdict = "gain" if test.low > 0 else "loss" if test.high < 0 else "none"
    result = Optimization(
        qs.name,
        folds,
        seed,
        len(ids),
        len(points),
        METRIC,
        float(heldout.mean()),
        list(bootstrap_ci(heldout.tolist())),
        float(base_scores.mean()),
        list(bootstrap_ci(base_scores.tolist())),
        test.to_dict(),
        verdict,
        best,
        {k: v for k, v in best.items() if search_configs.defaults(wb.settings).get(k) != v},
        chosen,
    )
    if save is not None:
        from dataclasses import replace

        note = (
            f"keepui experiment optimize --queries {qs.name} --folds {folds}: held-out "
            f"{METRIC} {result.heldout:.4f} vs default {result.default:.4f} "
            f"({verdict}, p={test.p:.3f})"
        )
        search_configs.save(wb.settings.config_path, save, best, note)
        result = replace(result, saved=save)
    return result
