"""FlowsScreen: run a state doc on the current query and watch its ticks live; step, restart."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Input, Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from keepui.tui.flow_control import FlowControl, TickBatcher
from keepui.tui.flow_params import THRESHOLDS, is_number, params_text, parse_params
from keepui.tui.messages import EngineFailed, FlowFinished, FlowPaused, FlowsListed, FlowTicks
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.screens.error import describe
from keepui.tui.widgets.flow_log import FlowLog
from keepui.tui.widgets.flow_results import FlowResults
from keepui.tui.widgets.flow_status import header_content, outcome_text
from keepui.tui.widgets.footer import KeepuiFooter
from keepui.tui.widgets.keys import focus_now, list_keys
from keepui.tui.widgets.queue_status import QueueStatus
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import FindQuery, FlowError, FlowInfo, FlowResult, UsageError, Workbench

DEFAULT_FLOW = "query-resolve"
ACTIVE = ("running", "paused")


class FlowsScreen(WorkbenchScreen):
    """A flow over the current query, tick by tick; Escape cancels it and goes back.

    Step mode (`s`) pauses before each tick: `n` runs the next one, `c` runs on to the end.
    `r` cancels the run and starts again with the params editor's thresholds.

    Args:
        workbench: The Workbench.
        q: The search to run the flow on (its query, tags and mode).
        flow: The state doc to start with.
        step: Start in step mode (pause before the first tick).
        timings: Show elapsed times (snapshots turn them off).
    """

    BINDINGS = list_keys(
        [
            Binding("escape", "back", "Back"),
            Binding("n", "next", "Next"),
            Binding("c", "continue", "Continue"),
            Binding("r", "restart", "Restart"),
            Binding("s", "toggle_step", "Step"),
            Binding("e", "edit_params", "Params"),
            Binding("f", "pick_flow", "Flow", show=False),
            Binding("y", "copy_id", "Copy id", show=False),
        ]
    )

    status = reactive("starting", init=False)
    """`starting`, `running`, `paused`, then `done`, `error`, `stopped` or `failed` (raised)."""
    paused_at: reactive[int | None] = reactive(None, init=False)
    """The tick the run waits before (step mode), or None."""
    result: reactive[FlowResult | None] = reactive(None, init=False)
    """How the current run ended (None while it runs)."""
    step_mode = reactive(False, init=False)
    """Pause before each tick."""

    def __init__(
        self,
        workbench: Workbench,
        q: FindQuery,
        *,
        flow: str = DEFAULT_FLOW,
        step: bool = False,
        timings: bool = True,
    ) -> None:
        super().__init__(workbench)
        self.q = q
        self.flow_name = flow
        self.timings = timings
        self.flows: list[FlowInfo] = []
        self.run_id = 0
        self.control: FlowControl | None = None
        self.budget = workbench.settings.flow_budget
        self.asked: dict[str, Any] = {}
        self.run_params: dict[str, Any] | None = None
        self.ticks_seen = 0
        self.paused_state = ""
        self.failure = ""
        self._worker: Worker[None] | None = None
        self._flows_asked = False
        self._numeric = set(THRESHOLDS)
        self._auto_text = params_text({}, self.budget)
        self.set_reactive(FlowsScreen.step_mode, step)

    def compose(self) -> ComposeResult:
        """Header, flow picker and params, outcome line, tick log and results, status."""
        yield Static(id="flow-header")
        with Horizontal(id="flow-controls"):
            yield Select(
                [(self.flow_name, self.flow_name)],
                value=self.flow_name,
                allow_blank=False,
                id="flow-name",
            )
            yield Input(
                self._auto_text,
                placeholder="KEY=VALUE …  e.g. margin_high=0.2 budget=8",
                id="flow-params",
            )
        yield Static(id="flow-outcome", markup=False)
        with Horizontal(id="flow-body"):
            yield FlowLog(timings=self.timings, id="flow-log")
            yield FlowResults(id="flow-results")
        with Horizontal(id="status-row"):
            yield StatusBar(id="status")
            yield QueueStatus(id="queue-status")
        yield KeepuiFooter()

    async def on_mount(self) -> None:
        """Title the panes, focus the log and start the run."""
        self.query_one("#flow-log").border_title = "ticks"
        self.query_one("#flow-results").border_title = "results"
        self.query_one("#flow-params").border_title = "params (r or Enter restarts)"
        focus_now(self.query_one("#flow-log"))
        await self.start_run()

    def on_unmount(self) -> None:
        """Stop a run still going (a paused worker thread must not wait forever)."""
        self._stop_run()

    # -- running ----------------------------------------------------------------------------
    async def start_run(self) -> bool:
        """Cancel the current run and start one with the editor's params.

        Returns False (and the error dialog says why) when the params are invalid; the
        current run then goes on.
        """
        editor = self.query_one("#flow-params", Input)
        try:
            overrides, budget = parse_params(editor.value, self._numeric)
        except UsageError as exc:
            focus_now(editor)  # the dialog closes onto the field to fix, not onto the log
            self.app.post_message(EngineFailed(exc))
            return False
        self._stop_run()
        self.run_id += 1
        self.budget = budget or self.wb.settings.flow_budget
        self.asked = {"query": self.q.query, "tags": list(self.q.tags)}
        if self.q.mode:
            self.asked["mode"] = self.q.mode
        self.asked.update(overrides)
        self.control = FlowControl(step=self.step_mode)
        self.run_params, self.ticks_seen, self.failure = None, 0, ""
        self.paused_at, self.result = None, None
        self.status = "running"
        self.query_one("#flow-results", FlowResults).set_results([])
        await self.query_one("#flow-log", FlowLog).reset()
        self._worker = self.run_flow(
            self.run_id, self.flow_name, dict(self.asked), self.budget, self.control
        )
        return True

    def _stop_run(self) -> None:
        if self.control is not None:
            self.control.cancel()

    @work(thread=True, exclusive=True, group="flow", exit_on_error=False)
    def run_flow(
        self, run: int, name: str, params: dict[str, Any], budget: int, control: FlowControl
    ) -> None:
        """Run the flow in a worker; ticks (batched), pauses and the result come as messages."""
        worker = get_current_worker()
        batch = TickBatcher(lambda ticks: self.post_message(FlowTicks(run, ticks)))

        def gate(tick: int, state: str, seen: dict[str, Any]) -> bool:
            def pause() -> None:
                batch.flush()
                self.post_message(FlowPaused(run, tick, state, seen))

            return control.gate(pause, lambda: worker.is_cancelled)

        try:
            result = self.wb.run_flow(name, params, budget=budget, on_tick=batch.add, gate=gate)
            batch.flush()
            self.post_message(FlowFinished(run, result))
        finally:
            batch.flush()
            control.finished.set()

    def want_flows(self) -> None:
        """List the state docs once, when the first run pauses or ends (not to slow it)."""
        if not self._flows_asked:
            self._flows_asked = True
            self.load_flows()

    @work(thread=True, exclusive=True, group="flow-list", exit_on_error=False)
    def load_flows(self) -> None:
        """List the state docs in a worker."""
        self.post_message(FlowsListed(self.wb.flows()))

    # -- messages ---------------------------------------------------------------------------
    async def on_flow_ticks(self, message: FlowTicks) -> None:
        """Append the ticks to the log (ticks of an older run are dropped)."""
        if message.run != self.run_id or not message.ticks:
            return
        self._learn(message.ticks[0].params)
        self.ticks_seen = message.ticks[-1].tick
        await self.query_one("#flow-log", FlowLog).add_ticks(message.ticks)
        self._render_state()

    def on_flow_paused(self, message: FlowPaused) -> None:
        """Step mode: say which tick waits."""
        if message.run != self.run_id:
            return
        self._learn(message.params)
        self.want_flows()
        self.paused_state = message.state
        self.paused_at = message.tick
        self.status = "paused"

    def on_flow_finished(self, message: FlowFinished) -> None:
        """Show the outcome and the final results."""
        if message.run != self.run_id:
            return
        result = message.result
        self.want_flows()
        self.query_one("#flow-results", FlowResults).set_results(result.results, result.data)
        self.paused_at = None
        self.result = result
        self.status = result.status
        if result.status == "error" and "error_type" in result.data:
            # an action failed (not a doc that judged its input): that is an error to show
            self.app.post_message(EngineFailed(FlowError(result.reason, "Flow failed")))

    def on_flows_listed(self, message: FlowsListed) -> None:
        """Offer every state doc in the picker (and the command palette)."""
        self.flows = message.flows
        names = [info.name for info in message.flows]
        if self.flow_name not in names:
            names.insert(0, self.flow_name)
        picker = self.query_one("#flow-name", Select)
        with picker.prevent(Select.Changed):
            picker.set_options((name, name) for name in names)
            picker.value = self.flow_name

    @on(Worker.StateChanged)
    def _flow_failed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._worker and event.state is WorkerState.ERROR:
            self.failure = describe(event.worker.error or Exception("?"))[0]
            self.want_flows()
            self.paused_at = None
            self.status = "failed"

    @on(Select.Changed, "#flow-name")
    async def _flow_picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.flow_name:
            self.flow_name = event.value
            await self.start_run()

    @on(Input.Submitted, "#flow-params")
    async def _params_entered(self, event: Input.Submitted) -> None:
        event.stop()
        if await self.start_run():
            focus_now(self.query_one("#flow-log"))

    @on(FlowResults.Chosen)
    def _open(self, event: FlowResults.Chosen) -> None:
        from keepui.tui.screens.document import DocumentScreen

        self.app.push_screen(DocumentScreen(self.wb, event.doc_id))

    def _learn(self, params: dict[str, Any]) -> None:
        """The params the run really has (defaults filled in): header, editor, validation."""
        if self.run_params is not None:
            return
        self.run_params = params
        self._numeric |= {k for k, v in params.items() if is_number(v)}
        editor = self.query_one("#flow-params", Input)
        if editor.value == self._auto_text:  # the user has not edited it: show every threshold
            self._auto_text = editor.value = params_text(params, self.budget)
        self._render_state()

    # -- state shown --------------------------------------------------------------------------
    def watch_status(self) -> None:
        """Show the new state."""
        self._render_state()

    def watch_paused_at(self) -> None:
        """Show the new state."""
        self._render_state()

    def watch_step_mode(self, on: bool) -> None:
        """Tell the run; leaving step mode lets a paused run go on."""
        if self.control is not None:
            self.control.set_step(on)
        if not on and self.paused_at is not None:
            self.paused_at = None
            self.status = "running"
        self._render_state()

    def _render_state(self) -> None:
        if not self.is_mounted:
            return
        params = self.run_params or self.asked
        header = header_content(self.flow_name, params, self.budget, step=self.step_mode)
        self.query_one("#flow-header", Static).update(header)
        line = self.query_one("#flow-outcome", Static)
        paused = (self.paused_at, self.paused_state) if self.paused_at is not None else None
        outcome = outcome_text(
            self.status,
            self.result,
            flow=self.flow_name,
            ticks_seen=self.ticks_seen,
            paused=paused,
            failure=self.failure,
            timings=self.timings,
            paused_ms=1000 * self.control.paused_s if self.control is not None else 0.0,
        )
        line.update(outcome)
        for kind in ("running", "paused", "done", "stopped", "error", "failed"):
            line.set_class(self.status == kind, f"-{kind}")
        activity = {"running": "flow running…", "paused": "flow paused"}.get(self.status, "")
        self.query_one("#status", StatusBar).activity = activity

    # -- actions ------------------------------------------------------------------------------
    def target(self) -> tuple[str, dict[str, object]] | None:
        """The highlighted final result."""
        hit = self.query_one("#flow-results", FlowResults).current
        return (str(hit["id"]), dict(hit)) if hit is not None else None

    def palette_commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        """`Flow: NAME` for every state doc, for the command palette."""
        return [
            (f"Flow: {i.name}", i.description or i.origin, partial(self.use_flow, i.name))
            for i in self.flows
        ]

    def use_flow(self, name: str) -> None:
        """Run another state doc on the same query (the picker follows)."""
        self.query_one("#flow-name", Select).value = name

    def _finished_note(self) -> bool:
        if self.status in ACTIVE and self.control is not None:
            return False
        self.notify("The flow has ended: r runs it again.", severity="warning")
        return True

    def action_next(self) -> None:
        """Run the next tick (step mode); while running, pause before the next one."""
        if self._finished_note() or self.control is None:
            return
        if self.paused_at is None:
            self.step_mode = True
            return
        self.paused_at = None
        self.status = "running"
        self.control.next()

    def action_continue(self) -> None:
        """Leave step mode and run to the end."""
        if not self._finished_note():
            self.step_mode = False

    async def action_restart(self) -> None:
        """Cancel the run and start again with the params editor's thresholds."""
        await self.start_run()

    def action_toggle_step(self) -> None:
        """Turn step mode on or off (on: pause before the next tick)."""
        self.step_mode = not self.step_mode

    def action_edit_params(self) -> None:
        """Put the cursor in the params editor."""
        focus_now(self.query_one("#flow-params", Input))

    def action_pick_flow(self) -> None:
        """Open the state doc picker."""
        self.want_flows()
        picker = self.query_one("#flow-name", Select)
        focus_now(picker)
        picker.expanded = True

    def action_back(self) -> None:
        """Leave the params editor or the picker; else cancel the run and go back."""
        if isinstance(self.focused, Input | Select):
            focus_now(self.query_one("#flow-log"))
            return
        self._stop_run()
        self.app.pop_screen()
