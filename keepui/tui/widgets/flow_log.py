"""FlowLog: a flow's ticks as they happen, one block per tick (rules, searches, signals, hits)."""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from keepui.tui.widgets.format import first_line, num
from keepui.tui.widgets.keys import SCROLL_KEYS
from keepui_engine import ActionCall, FlowTick

MAX_BLOCKS = 200
"""Ticks kept in the log (a run's budget is usually far smaller)."""
TOP_HITS = 3
"""Hits shown under each search of a tick."""


def outcome_kind(outcome: str) -> str:
    """`error`, `return` or `then`: how a tick (or rule) ended, for styling."""
    word = outcome.split(" ", 1)[0].rstrip(":")
    return word if word in ("error", "return", "then") else "other"


def search_content(call: ActionCall) -> Content:
    """One search of a tick: what it asked, its signals, and its top hits."""
    out: dict[str, Any] = call.output
    tags = out.get("tags") or []
    asked = f'find "{out.get("query", "")}"' + (f" [{', '.join(map(str, tags))}]" if tags else "")
    signals = (
        f"margin {num(out.get('margin'))} · entropy {num(out.get('entropy'))} · "
        f"lineage {num(out.get('lineage_strong'), 2)}"
    )
    parts = [
        Content.styled(f"  {call.rule}: ", "$text-muted"),
        Content.styled(asked, "bold"),
        Content(f" {out.get('mode') or ''} · {out.get('count', 0)} hits\n    "),
        Content.styled(signals, "$text-secondary"),
    ]
    for hit in (out.get("results") or [])[:TOP_HITS]:
        parts += [
            Content(f"\n    {num(hit.get('score'))}  "),
            Content.styled(str(hit.get("id", "?")), "$text-accent"),
            Content(f"  {first_line(str(hit.get('summary') or ''))}"),
        ]
    return Content.assemble(*parts)


def tick_content(tick: FlowTick, *, timings: bool = True) -> Content:
    """A tick as text: header, each rule (✓ fired, · not), each search with its top hits."""
    kind = outcome_kind(tick.outcome)
    head_style = {"error": "bold $text-error", "return": "bold $text-success"}.get(kind, "bold")
    ms = f" · {tick.elapsed_ms:.0f} ms" if timings else ""
    parts = [
        Content.styled(f"tick {tick.tick}", "bold $primary"),
        Content(f"  {tick.state}  "),
        Content.styled(f"→ {tick.outcome}", head_style),
        Content.styled(ms, "$text-muted"),
    ]
    for rule in tick.rules:
        mark = Content.styled("  ✓ ", "bold $text-success") if rule.fired else Content("  · ")
        label = f"{rule.rule}" + (f"  {rule.when}" if rule.when else "")
        label += f"  ({rule.action})" if rule.action else ""
        parts += [Content("\n"), mark, Content.styled(label, "" if rule.fired else "$text-muted")]
        if rule.outcome:
            parts.append(Content.styled(f"  → {rule.outcome}", "bold"))
    searches = tick.searches
    for call in searches:
        parts += [Content("\n"), search_content(call)]
    for call in tick.actions:
        if call not in searches:
            parts.append(Content.styled(f"\n  {call.rule}: {call.action}", "$text-muted"))
    return Content.assemble(*parts)


class TickBlock(Static):
    """One tick of the log; the classes `-then`, `-return` and `-error` follow its outcome.

    Args:
        tick: The tick shown.
        timings: Show how long it took (snapshots turn this off).
    """

    def __init__(self, tick: FlowTick, *, timings: bool = True) -> None:
        kind = outcome_kind(tick.outcome)
        super().__init__(tick_content(tick, timings=timings), classes=f"-{kind}")
        self.tick = tick


class FlowLog(VerticalScroll):
    """The ticks of the current run, oldest first; follows the newest while it runs.

    Args:
        timings: Show each tick's elapsed time.
    """

    BINDINGS = SCROLL_KEYS

    def __init__(self, *, timings: bool = True, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.timings = timings

    def on_mount(self) -> None:
        """Stay scrolled to the newest tick (until the user scrolls up)."""
        self.anchor()

    @property
    def blocks(self) -> list[TickBlock]:
        """The tick blocks shown, oldest first."""
        return list(self.query_children(TickBlock))

    @property
    def tick_numbers(self) -> list[int]:
        """The numbers of the ticks shown, oldest first."""
        return [block.tick.tick for block in self.blocks]

    async def add_ticks(self, ticks: list[FlowTick]) -> None:
        """Append a block per tick (dropping the oldest beyond MAX_BLOCKS)."""
        await self.mount_all(TickBlock(t, timings=self.timings) for t in ticks)
        extra = len(self.children) - MAX_BLOCKS
        if extra > 0:
            await self.remove_children(list(self.children)[:extra])

    async def reset(self) -> None:
        """Forget every tick (a new run starts) and follow the newest again."""
        await self.remove_children()
        self.anchor()
