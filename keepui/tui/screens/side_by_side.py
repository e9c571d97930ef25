"""SideBySideScreen: one query's rankings under two search configurations, judged in place."""

from __future__ import annotations

import threading

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from keepui.tui.messages import JudgmentsLoaded, SidesLoaded
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.judged_line import JudgedLine
from keepui.tui.widgets.keys import focus_now, list_keys
from keepui.tui.widgets.result_pane import ResultPane
from keepui.tui.widgets.search_bar import changes_text
from keepui_engine import FindQuery, FindResult, Workbench

DEPTH = 10
"""Hits shown per side: the top 10 that nDCG@10 and the experiment's unjudged pool count."""
KEYS = "+ relevant (again: 2, 3) · - not relevant · 0 forget · ? not judged yet"


class SideBySideScreen(WorkbenchScreen):
    """Each configuration's top 10 for one query, as the experiment ranked them.

    Judged hits lead with `✓` (`✓✓`, `✓✓✓`) or `✗`, unjudged ones with `?`. `+`, `-` and `0`
    on a hit judge it for the query (as on the search screen); both sides' marks and their
    `judged 7/10 · nDCG@10 0.81` lines follow at once. Escape goes back, where the
    experiment's row for the query is scored again (`judged` says whether it needs to be).

    Args:
        workbench: The Workbench.
        query: The query.
        configs: One or two search configurations, the reference first.
    """

    BINDINGS = list_keys(
        [
            Binding("escape", "back", "Back"),
            Binding("tab", "other_side", "Other side", show=False),
            Binding("shift+tab", "other_side", "Other side", show=False),
            Binding("y", "copy_id", "Copy id", show=False),
        ]
    )

    def __init__(self, workbench: Workbench, query: str, configs: list[str]) -> None:
        super().__init__(workbench)
        self.query_text = query
        """The query judged."""
        self.configs = list(configs)
        self.judged = False
        """A judgment was recorded or forgotten here (the experiment's row is now stale)."""
        self._judging = threading.Lock()
        self._changes = {c["name"]: c["changes"] for c in workbench.tuning.configs()}

    def compose(self) -> ComposeResult:
        """The query, then one pane per configuration with its score line."""
        yield Static(self.query_text, id="sbs-header", markup=False)
        yield Static(KEYS, id="sbs-keys", markup=False)
        with Horizontal(id="sbs-body"):
            for i, config in enumerate(self.configs):
                with Vertical(classes="sbs-side"):
                    yield Static(self._title(i, config), classes="sbs-title", markup=False)
                    yield ResultPane(
                        FindQuery(self.query_text, limit=DEPTH, config=config),
                        FindResult(self.query_text, [], DEPTH),
                        width=max(self.app.size.width // len(self.configs), 40),
                        mark_unjudged=True,
                        id=f"sbs-{i}",
                    )
                    yield JudgedLine(id=f"sbs-score-{i}")
        yield KeepuiFooter()

    def _title(self, i: int, config: str) -> str:
        changes = self._changes.get(config, {})
        about = "[search]" if config == "default" else changes_text(changes)
        return f"{'AB'[i]}  {config}  {about}"

    def on_mount(self) -> None:
        """Focus the first side and find both rankings."""
        focus_now(self.pane(0))
        self.load()

    def pane(self, i: int) -> ResultPane:
        """Side `i`'s result pane."""
        return self.query_one(f"#sbs-{i}", ResultPane)

    @property
    def panes(self) -> list[ResultPane]:
        """Both sides' panes, in order."""
        return [self.pane(i) for i in range(len(self.configs))]

    # -- workers ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="sides", exit_on_error=False)
    def load(self) -> None:
        """Rank the query under each configuration and read its judgments, in a worker."""
        tuning = self.wb.tuning
        results = {c: tuning.ranking(self.query_text, c, DEPTH) for c in self.configs}
        grades = {j.id: j.grade for j in self.wb.judgments(self.query_text)}
        scores = {
            c: self.wb.judged_score(self.query_text, [h.id for h in r.hits])
            for c, r in results.items()
        }
        self.post_message(SidesLoaded(results, grades, scores))

    @work(thread=True, group="judge", exit_on_error=False)
    def judge(self, doc_id: str, grade: int | None, ranked: dict[str, list[str]]) -> None:
        """Store (or forget) a judgment in a worker, then report the query's judgments."""
        with self._judging:  # one at a time, in the order they were asked
            if grade is None:
                self.wb.unjudge(self.query_text, doc_id)
            else:
                self.wb.judge(self.query_text, doc_id, grade)
            grades = {j.id: j.grade for j in self.wb.judgments(self.query_text)}
            scores = {c: self.wb.judged_score(self.query_text, ids) for c, ids in ranked.items()}
        self.post_message(JudgmentsLoaded(self.query_text, grades, scores))

    # -- messages -----------------------------------------------------------------------------
    def on_sides_loaded(self, message: SidesLoaded) -> None:
        """Fill both sides, marking what is judged."""
        for config, pane in zip(self.configs, self.panes, strict=True):
            pane.show(message.results[config])
            pane.set_judgments(message.grades, message.scores.get(config))

    @on(ResultPane.JudgeAsked)
    def _judge(self, event: ResultPane.JudgeAsked) -> None:
        event.stop()
        self.judged = True
        ranked = {c: p.ids for c, p in zip(self.configs, self.panes, strict=True)}
        self.judge(event.hit.id, event.grade, ranked)

    def on_judgments_loaded(self, message: JudgmentsLoaded) -> None:
        """Both sides' marks and score lines (a hit on both sides is marked on both)."""
        for config, pane in zip(self.configs, self.panes, strict=True):
            pane.set_judgments(message.grades, message.scores.get(config))

    @on(ResultPane.HitChosen)
    def _open(self, event: ResultPane.HitChosen) -> None:
        event.stop()
        from keepui.tui.screens.document import DocumentScreen

        self.app.push_screen(DocumentScreen(self.wb, event.hit.id, event.hit, self.query_text))

    # -- actions ------------------------------------------------------------------------------
    def target(self) -> tuple[str, dict[str, object]] | None:
        """The hit under the cursor of the focused side."""
        pane = self.focused if isinstance(self.focused, ResultPane) else None
        hit = pane.current_hit if pane is not None else None
        return (hit.id, hit.to_dict()) if hit is not None else None

    def action_other_side(self) -> None:
        """Tab: the other configuration's ranking."""
        panes = self.panes
        here = panes.index(self.focused) if self.focused in panes else -1
        focus_now(panes[(here + 1) % len(panes)])

    def action_back(self) -> None:
        """Back to the experiment (which scores this query again when it was judged here)."""
        self.dismiss(None)
