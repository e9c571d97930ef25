"""What the flow screen says about a run: its header and its outcome line."""

from __future__ import annotations

from typing import Any

from textual.content import Content

from keepui.tui.flow_params import params_text
from keepui_engine import FlowResult


def header_content(flow: str, params: dict[str, Any], budget: int, *, step: bool) -> Content:
    """`flow query-resolve  query 'auth' [topic=x]  step mode off` and the thresholds."""
    tags = params.get("tags") or []
    tags_text = f" [{', '.join(map(str, tags))}]" if tags else ""
    return Content.assemble(
        ("flow ", "$text-muted"),
        (flow, "bold"),
        ("  query ", "$text-muted"),
        (f"{params.get('query') or ''!r}{tags_text}", "bold"),
        ("  step mode ", "$text-muted"),
        ("on", "bold $text-accent") if step else ("off", "bold"),
        ("\nthresholds ", "$text-muted"),
        params_text(params, budget),
    )


def outcome_text(
    status: str,
    result: FlowResult | None,
    *,
    flow: str,
    ticks_seen: int = 0,
    paused: tuple[int, str] | None = None,
    failure: str = "",
    timings: bool = True,
    paused_ms: float = 0.0,
) -> str:
    """Where the run stands: running, paused before tick N, or how it ended and why.

    Args:
        status: `starting`, `running`, `paused`, `done`, `error`, `stopped` or `failed`.
        result: How it ended (None while it runs, or when the run raised).
        flow: The state doc it started from.
        ticks_seen: Ticks shown so far.
        paused: (tick, state) it waits before, in step mode.
        failure: The error's title when the run raised.
        timings: Say how long it took.
        paused_ms: Time the run waited in step mode (not counted in how long it took).
    """
    if status == "paused" and paused is not None:
        tick, state = paused
        return f"paused before tick {tick} ({state}) · n next · c continue · r restart · Esc back"
    if status in ("starting", "running", "paused"):
        done = f" · {ticks_seen} tick(s) so far" if ticks_seen else ""
        return f"running {flow}{done}…"
    if status == "failed" or result is None:
        return f"failed: {failure} (see the error dialog); r runs it again"
    ms = f" in {max(result.elapsed_ms - paused_ms, 0.0):.0f} ms" if timings else ""
    if timings and paused_ms >= 1:
        ms += f" (+{paused_ms / 1000:.1f} s paused)"
    path = " → ".join(result.history)
    line = f"{result.status}: {result.reason} · {len(result.ticks)} tick(s){ms}: {path}"
    if result.cursor:
        line += f" · cursor {result.cursor[:20]}… (keepui flow --cursor resumes it)"
    return line
