"""`keepui pending` and `keepui analyze`: the background queue, seen and worked from the CLI."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note, out
from keepui_engine import Interrupted, StoreError, UsageError, Workbench, open_workbench


def _bench(store: str | None) -> Workbench:
    """Own the store for a drain when no other process serves it; else work through it."""
    try:
        return open_workbench(store, own=True, create=False)
    except StoreError:
        return open_workbench(store, create=False)


def pending(
    drain: Annotated[
        bool, typer.Option("--drain", help="Run every runnable task now, with a progress bar.")
    ] = False,
    retry: Annotated[
        bool, typer.Option("--retry", help="Move dead letters back to the queue.")
    ] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Delete dead letters.")] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Show the background queue: counts by task and state, and failures with their errors.

    \b
    Examples:
      keepui pending
      keepui pending --drain          # summaries, analyze, OCR ... now, in the foreground
      keepui pending --retry --json   # give dead letters another five attempts
    """
    if sum((drain, retry, purge)) > 1:
        raise UsageError("choose one of --drain, --retry and --purge.")
    payload: dict[str, Any] = {}
    if drain:
        with _bench(store) as wb:
            payload["drained"] = _drain(wb, quiet=json_)
            payload.update(wb.pending())
    else:
        with open_workbench(store, create=False) as wb:
            if retry:
                payload["retried"] = wb.pending_retry()
            if purge:
                payload["purged"] = wb.pending_purge()
            payload.update(wb.pending())
    if json_:
        emit_json(payload)
        return
    _render(payload)


def _drain(wb: Workbench, *, quiet: bool) -> list[dict[str, Any]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    total = wb.pending()["runnable"]
    done = 0
    with Progress(
        TextColumn("working"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        console=console,
        transient=True,
        disable=quiet or not console.is_terminal,
    ) as bar:
        task = bar.add_task("drain", total=max(total, 1), last="")

        def tick(count: int, result: dict[str, Any]) -> None:
            nonlocal done
            done = count
            bar.update(
                task,
                completed=count,
                total=max(total, count),
                last=f"{result['task']} {result['doc_id']}: {result['outcome']}",
            )

        try:
            return wb.drain(progress=tick)
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted: {done} task(s) done, {max(total - done, 0)} not started",
                hint="run the same command again to continue: the task in hand goes back to "
                "the queue",
            ) from None


def _render(payload: dict[str, Any]) -> None:
    if "drained" in payload:
        done = payload["drained"]
        ok = sum(1 for r in done if r["outcome"] == "done")
        note(f"drained {len(done)} task(s): {ok} done, {len(done) - ok} failed")
        for r in done:
            if r["outcome"] != "done":
                note(f"  {r['outcome']}: {r['task']} {r['doc_id']}: {r['detail']}")
    for key in ("retried", "purged"):
        if key in payload:
            note(f"{key} {payload[key]} dead letter(s)")
    counts = payload["counts"]
    if not counts:
        out("queue empty")
    for task, states in counts.items():
        out(f"{task:10s} " + "  ".join(f"{s} {n}" for s, n in states.items()))
    if payload.get("next_attempt"):
        out(f"next attempt due {payload['next_attempt']}")
    for f in payload["failures"]:
        when = f" (next attempt {f['next_attempt']})" if f.get("next_attempt") else ""
        out(f"{f['state']:6s} {f['task']} {f['doc_id']} after {f['attempts']} attempt(s){when}")
        out(f"       error: {f['error']}")


def analyze(
    doc_id: Annotated[str, typer.Argument(help="The document to split into parts.")],
    queue: Annotated[
        bool, typer.Option("--queue", help="Queue it for the background worker instead.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Analyze again even if the text has not changed.")
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Decompose a document into parts (structure first, then size) and embed them.

    \b
    Examples:
      keepui analyze meeting-2026-11-22
      keepui get meeting-2026-11-22 --parts
    """
    with open_workbench(store, create=False) as wb:
        doc_id = wb.resolve_id(doc_id, whole=True)  # the path of a file that was put works too
        result = wb.analyze(doc_id, queue=queue, force=force)
    if json_:
        emit_json(result)
        return
    if "queued" in result:
        note(f"queued analyze of {doc_id} (task {result['queued']})")
    else:
        out(f"{doc_id}: {result['result']} ({result['parts']} part(s))")
