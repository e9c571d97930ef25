"""`keepui put FILE | DIR | URL`: a progress bar while files go in, then the report."""

from __future__ import annotations

from typing import Any

from keepui.cli.output import emit_json, note, out
from keepui_engine import UsageError, open_workbench


def put_sources(
    source: str | None,
    kind: str,
    *,
    id: str | None,  # noqa: A002
    tags: list[str] | None,
    exclude: list[str] | None,
    store: str | None,
    json_: bool,
) -> int:
    """Put one file or URL (errors raise) or a directory (errors are reported); exit code."""
    assert source is not None
    if kind == "dir":
        if id is not None:
            raise UsageError("--id names one document; a directory holds many. Drop --id.")
        return _put_dir(source, tags, exclude, store, json_)
    if exclude:
        raise UsageError("--exclude applies to directories; give a directory to put.")
    with open_workbench(store) as wb:
        report = wb.ingest([source], id=id, tags=tags, strict=True)
    entry = report.entries[0]
    for msg in entry.notes:
        note(f"{entry.id}: {msg}")
    if json_:
        emit_json(
            {"id": entry.id, "version": entry.version, "action": entry.status, "notes": entry.notes}
        )
        return 0
    out(str(entry.id))
    note(f"{entry.status} {entry.id} (version {entry.version})")
    return 0


def _put_dir(
    source: str, tags: list[str] | None, exclude: list[str] | None, store: str | None, json_: bool
) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    columns: list[Any] = [
        TextColumn("putting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} files/s"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with (
        Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar,
        open_workbench(store) as wb,
    ):
        task = bar.add_task("put", total=None, rate="–")

        def tick(done: int, total: int, current: str) -> None:
            elapsed = bar.tasks[0].elapsed or 0.0
            rate = f"{done / elapsed:.1f}" if elapsed > 0 else "–"
            bar.update(task, completed=done, total=total, rate=rate)

        report = wb.ingest([source], tags=tags, exclude=exclude, progress=tick)
    data = report.to_dict()
    if json_:
        emit_json(data)
    else:
        for entry in report.group("created", "updated"):
            out(str(entry.id))
        counts = data["counts"]
        note(
            f"{source}: {counts['indexed']} indexed, {counts['unchanged']} unchanged, "
            f"{counts['skipped']} skipped, {counts['failed']} failed"
        )
        for entry in report.group("skipped"):
            note(f"  skipped {entry.source}: {entry.reason}")
        for entry in report.failed:
            note(f"  FAILED  {entry.source}: {entry.reason}")
    return 1 if report.failed else 0
