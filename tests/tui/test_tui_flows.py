"""Flow screen: live ticks, step mode, restart with edited thresholds, cancel, errors, results."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select
from tui_helpers import screen_text, search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.commands import KeepuiCommands
from keepui.tui.flow_control import FlowControl, TickBatcher
from keepui.tui.flow_params import params_text, parse_params
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.error import ErrorModal
from keepui.tui.screens.flows import FlowsScreen
from keepui.tui.screens.help import HELP
from keepui.tui.screens.main import MainScreen
from keepui.tui.widgets.flow_log import FlowLog
from keepui.tui.widgets.flow_results import FlowResults
from keepui.tui.widgets.flow_status import outcome_text
from keepui_engine import FindQuery, FlowResult, FlowTick, UsageError

TWO_TICKS = "search"
"""On the seed, query-resolve finds no clear winner for this and moves on: two ticks (since
find answers about now, "storage" no longer meets its older version and wins at once)."""
ONE_TICK = "storage backups"
"""On the seed, a clear winner after one tick (with margin_high=0.99 it ends another way)."""


async def until(screen: FlowsScreen, attr: str, ok: Callable[[Any], bool]) -> None:
    """Wait (no polling) until the screen's reactive `attr` satisfies `ok`."""
    reached = asyncio.Event()

    def check(value: Any) -> None:
        if ok(value):
            reached.set()

    screen.watch(screen, attr, check)
    await asyncio.wait_for(reached.wait(), timeout=30)


async def finished(screen: FlowsScreen, run: int = 1) -> FlowResult:
    """Wait until run `run` has ended; its result."""
    await until(screen, "result", lambda r: r is not None and screen.run_id == run)
    assert screen.result is not None
    return screen.result


async def open_flow(app: KeepuiApp, pilot: Pilot[Any], query: str, key: str) -> FlowsScreen:
    await settle(app, pilot)
    await search(app, pilot, query)
    await pilot.press(key)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, FlowsScreen)
    return screen


def log_of(screen: FlowsScreen) -> FlowLog:
    return screen.query_one("#flow-log", FlowLog)


async def test_ctrl_r_runs_query_resolve_to_the_end(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+r")
        result = await finished(screen)
        await settle(app, pilot)
        assert result.flow == "query-resolve" and len(result.ticks) == 2
        assert result.status in ("done", "stopped") and result.reason
        assert log_of(screen).tick_numbers == [t.tick for t in result.ticks]
        blocks = log_of(screen).blocks
        assert all(str(b.tick.state) in str(b.render()) for b in blocks)
        assert result.ticks[0].params["query"] == TWO_TICKS
        assert screen.query_one("#flow-results", FlowResults).results == result.results
        outcome = str(screen.query_one("#flow-outcome").render())
        assert outcome.startswith(f"{result.status}: {result.reason}")
        assert " → ".join(result.history) in outcome
        text = screen_text(app)
        assert f"query '{TWO_TICKS}'" in text and "step mode off" in text
        assert "margin_high=0.15" in screen.query_one("#flow-params", Input).value
        # the same flow straight from the engine takes the same path
        direct = app.workbench.run_flow("query-resolve", {"query": TWO_TICKS, "tags": []})
        assert (direct.status, direct.history) == (result.status, result.history)


async def test_step_mode_pauses_before_each_tick(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+t")
        assert screen.step_mode
        await until(screen, "paused_at", lambda n: n == 1)
        assert log_of(screen).tick_numbers == []
        assert "paused before tick 1 (query-resolve)" in str(
            screen.query_one("#flow-outcome").render()
        )
        await pilot.press("n")
        await until(screen, "paused_at", lambda n: n == 2)
        assert log_of(screen).tick_numbers == [1]
        await pilot.press("c")
        result = await finished(screen)
        await settle(app, pilot)
        assert not screen.step_mode
        assert log_of(screen).tick_numbers == [1, 2] == [t.tick for t in result.ticks]


async def test_s_leaves_step_mode_and_the_run_goes_on(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+t")
        await until(screen, "paused_at", lambda n: n == 1)
        await pilot.press("s")
        result = await finished(screen)
        assert len(result.ticks) == 2 and result.reason != "cancelled"


async def test_restart_with_edited_thresholds_takes_another_path(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, ONE_TICK, "ctrl+r")
        first = await finished(screen)
        assert (first.status, first.reason, len(first.ticks)) == ("done", "clear winner", 1)
        editor = screen.query_one("#flow-params", Input)
        editor.value = editor.value.replace("margin_high=0.15", "margin_high=0.99")
        await pilot.press("r")
        second = await finished(screen, run=2)
        await settle(app, pilot)
        assert second.ticks[0].params["margin_high"] == 0.99
        assert screen.run_params is not None and screen.run_params["margin_high"] == 0.99
        assert second.reason != first.reason  # the clear winner no longer clears 0.99
        assert second.ticks[0].rules != first.ticks[0].rules
        assert log_of(screen).tick_numbers == [t.tick for t in second.ticks]
        assert "margin_high=0.99" in screen_text(app)


async def test_enter_in_the_params_editor_restarts_a_paused_run(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+t")
        await until(screen, "paused_at", lambda n: n == 1)
        old = screen.control
        assert old is not None
        await pilot.press("e")
        screen.query_one("#flow-params", Input).value = "budget=1"
        await pilot.press("enter")
        assert await asyncio.to_thread(old.finished.wait, 10)
        await until(screen, "paused_at", lambda n: n == 1 and screen.run_id == 2)
        await pilot.press("c")
        result = await finished(screen, run=2)
        assert (result.status, result.reason, result.budget) == ("stopped", "budget", 1)


async def test_escape_cancels_a_paused_run_and_goes_back(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+t")
        await until(screen, "paused_at", lambda n: n == 1)
        control = screen.control
        assert control is not None
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert await asyncio.to_thread(control.finished.wait, 10)  # the worker thread ended
        assert control.cancelled
        await settle(app, pilot)


async def test_quitting_with_a_paused_run_ends_its_thread(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+t")
        await until(screen, "paused_at", lambda n: n == 1)
        control = screen.control
        assert control is not None
    assert await asyncio.to_thread(control.finished.wait, 10)


async def test_keys_reach_the_picker_and_the_editor_and_escape_backs_out(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, ONE_TICK, "ctrl+r")
        await finished(screen)
        await settle(app, pilot)
        await pilot.press("f")
        assert screen.query_one("#flow-name", Select).expanded
        await pilot.press("escape")
        assert not screen.query_one("#flow-name", Select).expanded
        await pilot.press("escape")
        assert screen.focused is log_of(screen)
        await pilot.press("e")
        assert isinstance(screen.focused, Input)
        await pilot.press("escape")
        assert screen.focused is log_of(screen) and app.screen is screen
        await pilot.press("n")  # the run has ended: a notice, nothing else
        assert screen.status == "done" and screen.run_id == 1
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("margin_high=abc", "margin_high=abc: give a number"),
        ("margin_high", "write each param as KEY=VALUE"),
        ("budget=0", "budget=0: give a whole number"),
        ('query="open quote', "close the quote"),
    ],
)
async def test_a_bad_threshold_shows_the_error_dialog(
    app: KeepuiApp, text: str, wanted: str
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, ONE_TICK, "ctrl+r")
        await finished(screen)
        screen.query_one("#flow-params", Input).value = text
        await pilot.press("r")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ErrorModal)
        assert dialog.error_title == "Invalid flow params" and wanted in dialog.message
        await pilot.press("escape")
        assert app.screen is screen and screen.run_id == 1 and screen.status == "done"
        editor = screen.query_one("#flow-params", Input)
        assert app.focused is editor  # back on the field that caused it: letters type there
        await pilot.press("end", "x")
        assert editor.value == text + "x" and screen.run_id == 1


async def test_enter_on_a_result_opens_the_document(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, ONE_TICK, "ctrl+r")
        result = await finished(screen)
        await settle(app, pilot)
        results = screen.query_one("#flow-results", FlowResults)
        results.focus()
        await pilot.press("j", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DocumentScreen)
        assert app.screen.doc_id == result.results[1]["id"]
        await pilot.press("escape")
        assert app.screen is screen


async def test_an_unknown_state_doc_is_an_error_dialog_not_a_crash(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = FlowsScreen(app.workbench, FindQuery("storage"), flow="no-such-flow")
        await app.push_screen(screen)
        await until(screen, "status", lambda s: s == "failed")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal) and app.screen.error_title == "Not found"
        await pilot.press("escape")
        assert "failed: Not found" in str(screen.query_one("#flow-outcome").render())


async def test_another_state_doc_from_the_palette(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flow(app, pilot, ONE_TICK, "ctrl+r")
        await finished(screen)
        await settle(app, pilot)
        commands = {name: cb for name, _, cb in KeepuiCommands(screen).commands()}
        for wanted in ("Next", "Continue", "Restart", "Step", "Params", "Flow: query-branch"):
            assert wanted in commands, wanted
        commands["Flow: find-deep"]()
        result = await finished(screen, run=2)
        assert result.flow == "find-deep" and screen.flow_name == "find-deep"


async def test_main_screen_palette_and_help_name_the_flow(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        names = [name for name, _, _ in KeepuiCommands(app.screen).commands()]
        assert "Run flow: query-resolve on the current query" in names
        assert any(n.startswith("Step through flow: query-resolve") for n in names)
        assert "## Flow" in HELP and "`Ctrl+R`" in HELP
        await pilot.press("ctrl+r")  # nothing to run on yet: a notice, no screen
        assert isinstance(app.screen, MainScreen)


async def test_typed_text_is_the_query_when_no_search_ran(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#search-input", Input).value = "rivers tag:topic=geo"
        await pilot.press("ctrl+r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FlowsScreen)
        result = await finished(screen)
        assert result.ticks[0].params["query"] == "rivers"
        assert result.ticks[0].params["tags"] == ["topic=geo"]


async def test_usable_at_80x24(app: KeepuiApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_flow(app, pilot, TWO_TICKS, "ctrl+r")
        await finished(screen)
        await settle(app, pilot)
        for selector in ("#flow-header", "#flow-params", "#flow-outcome", "#flow-log",
                         "#flow-results", "#queue-status"):  # fmt: skip
            region = screen.query_one(selector).region
            assert region.height >= 1 and region.right <= 80 and region.bottom <= 24, selector
        assert screen.query_one("#flow-log").region.height >= 6
        text = screen_text(app)
        assert "ticks" in text and "results" in text and "Restart" in text


def _tick(n: int) -> FlowTick:
    return FlowTick(n, "query-resolve", {}, [], [], "then query-resolve", 1.0)


def test_tick_batcher_posts_the_first_at_once_then_batches() -> None:
    now = [0.0]
    posted: list[list[int]] = []
    batch = TickBatcher(lambda ticks: posted.append([t.tick for t in ticks]), 0.05, lambda: now[0])
    batch.add(_tick(1))
    batch.add(_tick(2))
    batch.add(_tick(3))
    assert posted == [[1]]
    now[0] = 0.06
    batch.add(_tick(4))
    assert posted == [[1], [2, 3, 4]]
    batch.add(_tick(5))
    batch.flush()
    batch.flush()
    assert posted == [[1], [2, 3, 4], [5]]


def test_flow_control_gate_blocks_until_next_and_cancel_unblocks() -> None:
    control = FlowControl(step=True)
    pauses: queue.Queue[int] = queue.Queue()
    answers: queue.Queue[bool] = queue.Queue()

    def run() -> None:
        for n in (1, 2):
            answers.put(control.gate(partial(pauses.put, n), lambda: False))

    thread = threading.Thread(target=run)
    thread.start()
    assert pauses.get(timeout=5) == 1
    assert answers.empty()
    control.next()
    assert answers.get(timeout=5) is True
    assert pauses.get(timeout=5) == 2
    control.cancel()
    assert answers.get(timeout=5) is False
    thread.join(5)
    assert not thread.is_alive()
    assert not FlowControl().gate(lambda: None, lambda: True)  # a cancelled worker stops


def test_params_text_round_trips() -> None:
    params = {"margin_high": 0.15, "entropy_low": 0.3, "query": "x", "limit": 10}
    text = params_text(params, 5)
    assert text == "margin_high=0.15 entropy_low=0.3 budget=5"
    assert parse_params(text) == ({"margin_high": 0.15, "entropy_low": 0.3}, 5)
    got, budget = parse_params("query='two words' tags=topic=a,b=c limit=3", {"limit"})
    assert got == {"query": "two words", "tags": ["topic=a", "b=c"], "limit": 3}
    assert budget is None
    with pytest.raises(UsageError):
        parse_params("limit=many", {"limit"})


def test_time_paused_in_step_mode_is_left_out_of_the_flow_time() -> None:
    clock = iter([100.0, 107.5])  # the gate blocks from 100 s to 107.5 s
    control = FlowControl(step=True, clock=lambda: next(clock))
    paused = threading.Event()

    def run() -> None:
        control.gate(paused.set, lambda: False)

    thread = threading.Thread(target=run)
    thread.start()
    assert paused.wait(5)
    control.next()
    thread.join(5)
    assert control.paused_s == 7.5
    result = FlowResult(
        "query-resolve", "done", "answered", "query-resolve", {}, [], [], ["query-resolve"], [],
        None, 8, 7520.0,
    )  # fmt: skip
    line = outcome_text("done", result, flow="query-resolve", paused_ms=7500.0)
    assert " in 20 ms (+7.5 s paused)" in line
