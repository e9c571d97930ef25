"""Tuning search on a store's own notes: query sets, search configurations, experiments, the
pairwise comparison and the hybrid optimizer (`Workbench.tuning`).

A client of the Workbench facade, as `keepui eval` is: it searches through `find`, reads
judgments and stores its query sets and experiments as documents; the two operations it adds
(`judge_many`, `sweep`) are in ops/tuning.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from keepui_engine.client.tuning.compare import Comparison
    from keepui_engine.client.tuning.experiments import Experiment, Progress
    from keepui_engine.client.tuning.judgments_io import JudgmentsImport
    from keepui_engine.client.tuning.optimize import Optimization
    from keepui_engine.client.tuning.querysets import QuerySet
    from keepui_engine.client.workbench import Workbench
    from keepui_engine.core.types import FindResult


class Tuning:
    """Query sets, search configurations and experiments of one store (`wb.tuning`)."""

    def __init__(self, wb: Workbench) -> None:
        self._wb = wb

    def configs(self) -> list[dict[str, Any]]:
        """`default` ([search]) and each `[search.configs.NAME]`: {"name", "changes" (what it
        changes from the default), "settings" (every setting as it has them)}."""
        from keepui_engine.core import search_configs as sc

        st = self._wb.settings
        return [
            {"name": n, "changes": sc.changes(st, n), "settings": sc.settings_of(st, n)}
            for n in sc.names(st)
        ]

    def limit(self, config: str | None) -> int:
        """How many hits configuration `config` shows (its `limit`, else 10).

        Raises:
            UsageError: No configuration has that name.
        """
        from keepui_engine.core.search_configs import limit_of

        return limit_of(self._wb.settings, config)

    def add_queryset(
        self,
        name: str,
        *,
        from_judgments: bool = False,
        from_history: bool = False,
        last: int = 100,
        path: Path | None = None,
    ) -> QuerySet:
        """Store query set `name` from the judged queries, the last `last` distinct searches,
        or a file (one query a line, or BEIR queries.jsonl); again: a new version.

        Raises:
            UsageError: Not exactly one source, a bad name, or no queries in it.
        """
        from keepui_engine.client.tuning import querysets
        from keepui_engine.core.errors import UsageError

        if from_judgments + from_history + (path is not None) != 1:
            raise UsageError("give one source: --from-judgments, --from-history or a FILE.")
        querysets.check_name(name)
        if from_judgments:
            queries, source = [j.query for j in self._wb.judgments()], "judgments"
        elif from_history:
            queries, source = querysets.from_history(self._wb, last), "history"
        else:
            assert path is not None
            queries, source = querysets.read_file(path), "file"
        return querysets.add(self._wb, name, queries, source)

    def querysets(self) -> list[QuerySet]:
        """Every stored query set, by name."""
        from keepui_engine.client.tuning import querysets

        return querysets.listing(self._wb)

    def queryset(self, name: str) -> QuerySet:
        """Query set `name`, with how many judgments each query has.

        Raises:
            NotFound: There is none.
        """
        from keepui_engine.client.tuning import querysets

        return querysets.with_judgments(self._wb, querysets.load(self._wb, name))

    def import_judgments(self, qrels: Path, queries: Path) -> JudgmentsImport:
        """Record the judgments of a qrels file (BEIR or TREC) with a BEIR queries file."""
        from keepui_engine.client.tuning.judgments_io import import_files

        return import_files(self._wb, qrels, queries)

    def run(
        self,
        queryset: str,
        configs: list[str],
        metrics: list[str] | None = None,
        progress: Progress | None = None,
    ) -> Experiment:
        """Run and score an experiment and store it (see `tuning.experiments.run`)."""
        from keepui_engine.client.tuning.experiments import run

        return run(self._wb, queryset, configs, metrics, progress)

    def experiments(self, queryset: str | None = None) -> list[Experiment]:
        """Stored experiments, oldest first."""
        from keepui_engine.client.tuning.experiments import listing

        return listing(self._wb, queryset)

    def experiment(self, ref: str) -> Experiment:
        """A stored experiment by id, or `latest`."""
        from keepui_engine.client.tuning.experiments import load

        return load(self._wb, ref)

    def ranking(self, query: str, config: str, depth: int = 10) -> FindResult:
        """What configuration `config` finds for `query` as an experiment ranks it (at most
        `depth` hits, or its own limit; the near-duplicate fold off unless it sets `dedup`).

        Raises:
            UsageError: No configuration has that name.
        """
        from keepui_engine.client.tuning.experiments import ranked_find

        return ranked_find(self._wb, query, config, depth)

    def rescore(self, experiment: Experiment, query: str) -> Experiment:
        """The experiment with one query ranked and scored again on today's judgments (not
        stored; see `tuning.rescore`).

        Raises:
            UsageError: No query of the experiment would have judgments left.
        """
        from keepui_engine.client.tuning.rescore import rescore

        return rescore(self._wb, experiment, query)

    def compare(
        self, queryset: str, configs: list[str], k: int = 10, progress: Progress | None = None
    ) -> Comparison:
        """Two configurations' top k compared per query (see `tuning.compare`)."""
        from keepui_engine.client.tuning.compare import compare

        return compare(self._wb, queryset, configs, k, progress)

    def optimize(
        self,
        queryset: str,
        *,
        folds: int = 5,
        seed: int = 15,
        save: str | None = None,
        progress: Progress | None = None,
    ) -> Optimization:
        """Cross-validate hybrid fusion's settings (see `tuning.optimize`)."""
        from keepui_engine.client.tuning.optimize import optimize

        return optimize(self._wb, queryset, folds, seed, save, progress)
