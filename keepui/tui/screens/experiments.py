"""ExperimentsScreen: pick a query set and search configurations, run an experiment with its
progress live, read its metrics with their intervals and its queries by difference."""

from __future__ import annotations

import threading

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, ProgressBar, Select, Static

from keepui.tui.messages import (
    ExperimentFailed,
    ExperimentProgress,
    ExperimentShown,
    TuningLoaded,
)
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.widgets.experiment_tables import (
    ConfigList,
    MetricsTable,
    QueryTable,
    paired_lines,
)
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.format import tui_words
from keepui.tui.widgets.keys import focus_now, list_keys
from keepui.tui.widgets.search_bar import changes_text
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import Experiment, Interrupted, KeepuiError, QuerySet, Workbench

NO_SETS = (
    "No query sets yet. An experiment runs a query set: make one from your judgments with "
    "keepui queryset add NAME --from-judgments (judge hits with + and - on the search screen "
    "first), or from your searches with --from-history."
)
IDLE = "r runs the checked configurations on the query set (Space checks one)"


def set_label(qs: QuerySet) -> str:
    """`mine · 12 queries`."""
    return f"{qs.name} · {len(qs.queries)} queries"


def experiment_header(exp: Experiment, history: int, how: str) -> str:
    """What the shown experiment is: its id, when, the set and how many of its queries count."""
    skipped = f" ({exp.skipped} without judgments)" if exp.skipped else ""
    head = (
        f"{exp.id}  {exp.when}  {exp.queryset} v{exp.queryset_version}: {exp.queries} queries, "
        f"{exp.judged} judged{skipped}"
    )
    if how == "rescored":
        return head + " · re-scored with your new judgments, not stored (r runs it again)"
    more = f" · {history} experiments on this set" if history > 1 else ""
    return head + (" · just run" if how == "ran" else " · the latest") + more


class ExperimentsScreen(WorkbenchScreen):
    """Experiments on the store's query sets (see docs/tuning.md).

    The latest stored experiment of the chosen set shows at once; `r` runs the checked
    configurations (the first checked is the reference of the paired tests and the `diff`
    column) in a worker, its progress live. Enter on a query opens the side by side of the
    first two configurations' rankings, where hits are judged in place; back here, that
    query's row is scored again.

    Args:
        workbench: The Workbench.
    """

    BINDINGS = list_keys(
        [
            Binding("escape", "back", "Back"),
            Binding("r", "run", "Run", tooltip="Run the experiment: the checked configurations"),
            Binding("s", "pick_set", "Query set", show=False),
            Binding("c", "pick_configs", "Configs", show=False),
            Binding("d", "to_queries", "Queries", tooltip="Queries by difference (Enter: both)"),
        ]
    )

    AUTO_FOCUS = "#exp-configs"

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(workbench)
        self.querysets: list[QuerySet] = []
        self.configs: list[str] = []
        self.experiment: Experiment | None = None
        """The experiment shown (None: none yet for the set)."""
        self.history = 0
        self.run_id = 0
        self.running = False
        self.loaded = False
        self._run_asked = False
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        """Pickers and Run on top, the progress, the metrics and paired tests, the queries."""
        yield Static("Experiments", id="exp-header", markup=False)
        with Horizontal(id="exp-controls"):
            with Vertical(id="exp-pick"):
                yield Select[str]([], prompt="query set", id="exp-queryset")
                yield Button("Run  r", id="exp-run", compact=True)
            yield ConfigList(id="exp-configs")
        with Horizontal(id="exp-progress-row"):
            yield ProgressBar(total=1, show_eta=False, id="exp-bar")
            yield Static(IDLE, id="exp-progress", markup=False)
        yield Static(id="exp-message", markup=False)
        yield MetricsTable(id="exp-metrics")
        yield Static(id="exp-paired", markup=False)
        yield QueryTable(id="exp-queries")
        yield StatusBar(id="status")
        yield KeepuiFooter()

    def on_mount(self) -> None:
        """Title the panes and read the query sets, the configurations and the history."""
        self.query_one("#exp-configs").border_title = "configurations (Space checks)"
        self.query_one("#exp-metrics").border_title = "metrics · 95% intervals"
        self.query_one("#exp-queries").border_title = "queries by difference (Enter: side by side)"
        self.load()

    # -- reading ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="tuning", exit_on_error=False)
    def load(self) -> None:
        """Read the query sets, the configurations and the latest experiment in a worker."""
        tuning = self.wb.tuning
        configs = tuning.configs()
        try:
            sets = tuning.querysets()
            stored = tuning.experiments() if sets else []
        except KeepuiError as exc:  # said in the screen; the configurations still show
            self.post_message(TuningLoaded([], configs, None))
            self.post_message(ExperimentFailed(exc))
            return
        names = [s.name for s in sets]
        latest = next((e.queryset for e in reversed(stored) if e.queryset in names), None)
        chosen = latest or (names[0] if names else None)
        self.post_message(TuningLoaded(sets, configs, chosen))
        if chosen is not None:
            mine = [e for e in stored if e.queryset == chosen]
            self.post_message(ExperimentShown(chosen, mine[-1] if mine else None, len(mine)))

    @work(thread=True, exclusive=True, group="tuning", exit_on_error=False)
    def load_set(self, name: str) -> None:
        """Read the latest experiment of a query set in a worker."""
        try:
            mine = self.wb.tuning.experiments(name)
        except KeepuiError as exc:
            self.post_message(ExperimentFailed(exc))
            return
        self.post_message(ExperimentShown(name, mine[-1] if mine else None, len(mine)))

    def on_tuning_loaded(self, message: TuningLoaded) -> None:
        """Offer the query sets and the configurations."""
        self.loaded = True
        self.querysets = message.querysets
        picker = self.query_one("#exp-queryset", Select)
        with picker.prevent(Select.Changed):
            picker.set_options((set_label(s), s.name) for s in message.querysets)
            if message.chosen is not None:
                picker.value = message.chosen
        self.configs = [c["name"] for c in message.configs]
        checks = self.query_one("#exp-configs", ConfigList)
        checks.clear_options()
        checks.add_options(
            (Text(f"{c['name']}  {self._changes(c)}", no_wrap=True), c["name"], i < 2)
            for i, c in enumerate(message.configs)
        )
        if not message.querysets:
            self.say(NO_SETS)  # (or, after a failed read, the error that follows)
            self._run_asked = False
        elif self._run_asked:
            self._run_asked = False
            self.action_run()

    @staticmethod
    def _changes(config: dict[str, object]) -> str:
        if config["name"] == "default":
            return "[search]"
        changes = config.get("changes")
        return changes_text(changes) if isinstance(changes, dict) else ""

    def on_experiment_shown(self, message: ExperimentShown) -> None:
        """Show an experiment (or say the set has none yet)."""
        exp = message.experiment
        if message.how == "ran":
            self.running = False
            self.set_activity("")
            self.query_one("#exp-progress", Static).update(
                f"done: {message.queryset}, {exp.queries if exp else 0} queries × "
                f"{len(exp.configs) if exp else 0} configurations, stored"
            )
        if message.queryset != self.queryset:
            return  # another set was picked meanwhile
        if message.how == "rescored" and (
            self.experiment is None or exp is None or exp.id != self.experiment.id
        ):
            return  # another experiment is shown now
        self.experiment = exp
        self.history = message.history
        if exp is not None and message.how == "stored":
            self._check(exp.configs)
        header = self.query_one("#exp-header", Static)
        if exp is None:
            header.update(f"No experiment on {message.queryset} yet.")
            self.say(f"Check the configurations to compare and press r to run {message.queryset}.")
        else:
            header.update(experiment_header(exp, message.history, message.how))
            self.say("")
        self.query_one("#exp-metrics", MetricsTable).show(exp)
        self.query_one("#exp-paired", Static).update("\n".join(paired_lines(exp)) if exp else "")
        keep = _qid_of(exp, message.query) if exp is not None and message.query else None
        self.query_one("#exp-queries", QueryTable).show(exp, keep)

    def _check(self, configs: list[str]) -> None:
        """Check the configurations an experiment ran (those still defined)."""
        checks = self.query_one("#exp-configs", ConfigList)
        known = [c for c in configs if c in self.configs]
        if known:
            checks.deselect_all()
            for name in known:
                checks.select(name)

    @on(Select.Changed, "#exp-queryset")
    def _set_picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.experiment = None
            self.query_one("#exp-header", Static).update(f"{event.value}…")
            self.load_set(event.value)

    @property
    def queryset(self) -> str | None:
        """The query set picked."""
        value = self.query_one("#exp-queryset", Select).value
        return value if isinstance(value, str) else None

    @property
    def checked(self) -> list[str]:
        """The configurations checked, in the list's order (the first is the reference)."""
        chosen = set(self.query_one("#exp-configs", ConfigList).selected)
        return [c for c in self.configs if c in chosen]

    def say(self, text: str, *, error: bool = False) -> None:
        """A line under the progress: what to do, or what went wrong (empty: hidden)."""
        line = self.query_one("#exp-message", Static)
        line.update(text)
        line.display = bool(text)
        line.set_class(error, "-error")

    # -- running ------------------------------------------------------------------------------
    def action_run(self) -> None:
        """Run the checked configurations on the query set (in a worker, progress live)."""
        if not self.loaded:
            self._run_asked = True  # `r` typed before the sets were read: run once they are
            return
        if self.running:
            self.notify("An experiment is running: its progress is above the metrics.")
            return
        name = self.queryset
        if name is None:
            self.say(NO_SETS if not self.querysets else "Pick a query set first (s).", error=True)
            return
        configs = self.checked
        if not configs:
            self.say("Check at least one configuration (c, then Space).", error=True)
            return
        self.run_id += 1
        self.running = True
        self.say("")
        bar = self.query_one("#exp-bar", ProgressBar)
        bar.update(total=1, progress=0)
        self.query_one("#exp-progress", Static).update(f"running {name}…")
        self.set_activity("experiment running…")
        self.run_experiment(self.run_id, name, configs, self.history)

    @work(thread=True, exclusive=True, group="experiment", exit_on_error=False)
    def run_experiment(self, run: int, name: str, configs: list[str], history: int) -> None:
        """Run and store the experiment in a worker; progress, then the result, as messages."""

        def progress(config: str, done: int, total: int) -> None:
            if self._stop.is_set():  # the screen was left: stop before storing anything
                raise Interrupted("the experiment was stopped: the screen was closed.")
            step = configs.index(config) if config in configs else 0
            self.post_message(ExperimentProgress(run, config, step, len(configs), done, total))

        try:
            exp = self.wb.tuning.run(name, configs, progress=progress)
        except KeepuiError as exc:
            self.post_message(ExperimentFailed(exc, run))
            return
        self.post_message(ExperimentShown(name, exp, history + 1, "ran"))

    def on_experiment_progress(self, message: ExperimentProgress) -> None:
        """Move the bar: `words 12/300 queries (2 of 2)`."""
        if message.run != self.run_id:
            return
        bar = self.query_one("#exp-bar", ProgressBar)
        bar.update(
            total=max(message.total * message.steps, 1),
            progress=message.step * message.total + message.done,
        )
        self.query_one("#exp-progress", Static).update(
            f"{message.config} {message.done}/{message.total} queries "
            f"({message.step + 1} of {message.steps})"
        )

    def on_experiment_failed(self, message: ExperimentFailed) -> None:
        """Say what went wrong in the screen (the screen stays usable)."""
        if message.run:
            if message.run != self.run_id:
                return
            self.running = False
            self.set_activity("")
            self.query_one("#exp-progress", Static).update(IDLE)
        error = message.error
        text = error.message if isinstance(error, KeepuiError) else str(error)
        self.say(tui_words(text), error=True)

    # -- side by side -------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#exp-queries")
    def _open_query(self, event: DataTable.RowSelected) -> None:
        event.stop()
        from keepui.tui.screens.side_by_side import SideBySideScreen

        row = self.query_one("#exp-queries", QueryTable).current
        exp = self.experiment
        if row is None or exp is None:
            return
        if row["query"] == row["qid"]:
            self.say("This query's words are gone with its query set's version.", error=True)
            return
        side = SideBySideScreen(self.wb, row["query"], exp.configs[:2])
        self.app.push_screen(side, lambda _: self._back_from(side, exp))

    def _back_from(self, side: object, exp: Experiment) -> None:
        """Back from the side by side: score the query again when it was judged there."""
        if getattr(side, "judged", False):
            self.rescore(exp, str(getattr(side, "query_text", "")))

    @work(thread=True, exclusive=True, group="rescore", exit_on_error=False)
    def rescore(self, exp: Experiment, query: str) -> None:
        """Score one query of the experiment again on today's judgments, in a worker."""
        try:
            new = self.wb.tuning.rescore(exp, query)
        except KeepuiError as exc:
            self.post_message(ExperimentFailed(exc))
            return
        self.post_message(ExperimentShown(exp.queryset, new, self.history, "rescored", query))

    # -- keys ---------------------------------------------------------------------------------
    @on(Button.Pressed, "#exp-run")
    def _run_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_run()

    def action_pick_set(self) -> None:
        """Open the query set picker."""
        picker = self.query_one("#exp-queryset", Select)
        focus_now(picker)
        picker.expanded = True

    def action_pick_configs(self) -> None:
        """Go to the configurations (Space checks one)."""
        focus_now(self.query_one("#exp-configs"))

    def action_to_queries(self) -> None:
        """Go to the queries (Enter opens one side by side)."""
        focus_now(self.query_one("#exp-queries"))

    def action_back(self) -> None:
        """Close the query set picker; else go back (a running experiment stops, unstored)."""
        picker = self.query_one("#exp-queryset", Select)
        if picker.expanded:
            picker.expanded = False
            focus_now(picker)
            return
        self._stop.set()
        self.app.pop_screen()

    def on_unmount(self) -> None:
        """Stop a running experiment (it stores nothing)."""
        self._stop.set()


def _qid_of(exp: Experiment, query: str) -> str | None:
    """The id of one of the experiment's queries by its words."""
    return next((k for k, row in exp.per_query.items() if row.get("query") == query), None)
