"""App-wide messages: what thread workers report back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual import events
from textual.message import Message

from keepui_engine import (
    Experiment,
    FindQuery,
    FindResult,
    FlowInfo,
    FlowResult,
    FlowTick,
    Hit,
    Item,
    Part,
    QuerySet,
    SearchRecord,
    Stats,
    VersionDiff,
    VersionInfo,
)


class HeldKey(events.Key):
    """A key that waited for its screen to be built, handed on (it is not held again)."""


class ReleaseKeys(Message):
    """The screen that keys were held for is up: hand them on."""


@dataclass
class EngineFailed(Message):
    """Something failed and the user should see it in the error dialog."""

    error: BaseException
    """The error (a KeepuiError carries a title and what to do)."""


@dataclass
class ModelReady(Message):
    """The embedding model and the vector index are loaded."""


@dataclass
class StoreStats(Message):
    """The latest counts of the store, from the background poll."""

    stats: Stats
    """Counts and size of the store."""

    def can_replace(self, message: Message) -> bool:
        """A newer poll result makes an unprocessed older one pointless."""
        return isinstance(message, StoreStats)


@dataclass
class QueueChanged(Message):
    """The background queue's latest report, from the poll or after a queue action."""

    report: dict[str, Any]
    """`Workbench.pending()`: counts by task and state, runnable, failures, running work."""

    def can_replace(self, message: Message) -> bool:
        """A newer report makes an unprocessed older one pointless (bursts collapse)."""
        return isinstance(message, QueueChanged)


@dataclass
class StoreChanged(Message):
    """The store's counts changed (another process, or this one, wrote to it)."""

    stats: Stats
    """The new counts."""


@dataclass
class SearchFinished(Message):
    """A find ran."""

    q: FindQuery
    """What it asked for."""
    result: FindResult
    """What it found."""
    pane_id: str | None = None
    """The result tab to update, or None to open a new tab."""
    seq: int = 0
    """Which of the screen's new searches this is (a later one supersedes it)."""


@dataclass
class SearchRecorded(Message):
    """A new search was written to the search history (just after its results were posted)."""

    record: SearchRecord
    """Its history entry (refreshes of a tab are not recorded)."""


@dataclass
class HistoryLoaded(Message):
    """The search history was read from the store."""

    records: list[SearchRecord]
    """Newest first."""


@dataclass
class ItemLoaded(Message):
    """A document (or one of its versions) was read."""

    item: Item
    """The document version."""
    purpose: str
    """What it is for: `preview`, `version`, `tags` or `editor`."""
    hit: Hit | None = None
    """The hit it was loaded for (previews)."""
    current: Item | None = None
    """The document's current version, when the hit matched an older one (previews)."""


@dataclass
class DocumentLoaded(Message):
    """What the document screen shows of the document itself (its similar items follow)."""

    item: Item
    """The current version."""
    versions: list[VersionInfo]
    """Its timeline, newest first."""
    parts: list[Part]
    """Its parts (empty when it has none)."""
    shown: Item | None = None
    """The version to show first (the one a hit matched), when not the current one."""


@dataclass
class SimilarLoaded(Message):
    """The documents close to one document were found."""

    summary: str
    """The summary they were found for (a newer summary finds them again)."""
    similar: list[Hit] = field(default_factory=list)
    """Other documents close to it, closest first."""


@dataclass
class VersionLoaded(Message):
    """One version of a document and its parts were read (the timeline's cursor moved)."""

    item: Item
    """The version."""
    parts: list[Part]
    """Its parts (empty when it has none)."""


@dataclass
class DiffReady(Message):
    """Two versions were compared."""

    diff: VersionDiff
    """The comparison."""


@dataclass
class WriteDone(Message):
    """A write from the TUI (note, file, tags, delete, edit) finished."""

    text: str
    """What happened, for a notification."""
    doc_id: str
    """The document written."""
    action: str
    """created, updated, unchanged, reverted, deleted, purged, or ingested (a folder)."""
    severity: str = "information"
    """The notification's severity (`warning` when some files of a folder failed)."""


@dataclass
class FlowsListed(Message):
    """The state docs that can be run were listed."""

    flows: list[FlowInfo]
    """Shipped and stored state docs, by name."""


@dataclass
class FlowTicks(Message):
    """Ticks of a running flow, in order (batched: a fast flow posts a few of these)."""

    run: int
    """The run they belong to (a restart starts a new one; late ticks of old runs are dropped)."""
    ticks: list[FlowTick]
    """The ticks, oldest first."""


@dataclass
class FlowPaused(Message):
    """Step mode: the flow waits before its next tick until the user says go."""

    run: int
    """The run that waits."""
    tick: int
    """The number of the tick it will run next."""
    state: str
    """The state doc that tick evaluates."""
    params: dict[str, Any]
    """The params that tick will see (result lists shown as their size)."""


@dataclass
class FlowFinished(Message):
    """A flow run ended: done, error, or stopped (budget, cancelled, no progress)."""

    run: int
    """The run that ended."""
    result: FlowResult
    """How it ended, every tick and the final results."""


@dataclass
class JudgmentsLoaded(Message):
    """A query's relevance judgments were read (after a search, or after one was recorded)."""

    query: str
    """The query judged (the tabs searching for it show the marks)."""
    grades: dict[str, int]
    """Document id -> grade 0..3 (empty: the query has no judgments)."""
    scores: dict[str, dict[str, Any]]
    """Result tab id -> `Workbench.judged_score` of its hits (judged, shown, ndcg@10)."""


@dataclass
class FacetsLoaded(Message):
    """Tag values with counts were read for the facet browser."""

    facets: dict[str, dict[str, int]]
    """KEY -> VALUE -> how many documents carry it (system tags left out)."""


@dataclass
class FacetsApplied(Message):
    """Tag values were chosen in the facet browser: open a tab of what carries them."""

    selection: dict[str, list[str]]
    """KEY -> chosen values (AND across keys, OR within a key)."""
    pane: Any = None
    """The result pane whose hits were browsed (None: the whole store was)."""


@dataclass
class ListingFinished(Message):
    """Documents carrying tag values were listed (a facet tab without a query)."""

    selection: dict[str, list[str]]
    """The tag values they carry."""
    result: FindResult
    """The documents as hits (no scores), newest first."""
    pane_id: str | None = None
    """The result tab to update, or None to open a new tab."""


@dataclass
class TuningLoaded(Message):
    """The query sets and search configurations were read for the experiments screen."""

    querysets: list[QuerySet]
    """Every stored query set, by name."""
    configs: list[dict[str, Any]]
    """`Tuning.configs()`: `default`, then each `[search.configs.NAME]`."""
    chosen: str | None
    """The query set to show first (the latest experiment's), None when there is none."""


@dataclass
class ExperimentShown(Message):
    """An experiment to show: the latest stored for a query set, one just run, or one with a
    query re-scored after judgments."""

    queryset: str
    """The query set it is (or would be) of."""
    experiment: Experiment | None
    """The experiment (None: the set has none yet)."""
    history: int
    """How many experiments the store holds for the set."""
    how: str = "stored"
    """`stored` (read back), `ran` (just run and stored) or `rescored` (not stored)."""
    query: str = ""
    """The query re-scored (`rescored`): its row keeps the cursor."""


@dataclass
class ExperimentProgress(Message):
    """An experiment running: how far each configuration has got."""

    run: int
    """The run it belongs to."""
    config: str
    """The configuration whose queries run."""
    step: int
    """Its place among the configurations run (0 = first)."""
    steps: int
    """How many configurations run."""
    done: int
    """Its queries run so far."""
    total: int
    """The queries of the set."""

    def can_replace(self, message: Message) -> bool:
        """A newer count of the same run makes an unprocessed older one pointless."""
        return isinstance(message, ExperimentProgress) and message.run == self.run


@dataclass
class ExperimentFailed(Message):
    """Running, reading or re-scoring an experiment failed (shown in the screen)."""

    error: BaseException
    """The error (a KeepuiError says what to do)."""
    run: int = 0
    """The run that failed (0: not a run)."""


@dataclass
class SidesLoaded(Message):
    """The configurations' rankings of one query, with its judgments, for the side by side."""

    results: dict[str, FindResult]
    """Configuration -> what it ranks for the query (as the experiment ranks)."""
    grades: dict[str, int]
    """The query's judgments: document id -> grade."""
    scores: dict[str, dict[str, Any]]
    """Configuration -> `Workbench.judged_score` of its ranking."""
