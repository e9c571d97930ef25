"""`keepui put FILE | DIR | URL | -`: stdin read within its cap; a progress bar while files go
in, then the report."""

from __future__ import annotations

import sys
from typing import Any, BinaryIO

from keepui.cli.output import emit_json, note, out
from keepui.cli.spinner import BarReporter
from keepui_engine import Interrupted, UsageError, load_settings, open_workbench
from keepui_engine.core import notices

MB = 1024 * 1024
CHUNK = 1 << 20


def read_stdin(store: str | None, stream: BinaryIO | None = None) -> str:
    """Standard input as text: read a chunk at a time and refused as soon as it passes
    `[ingest] max_file_mb`, then decoded as UTF-8 and held to `[ingest] max_text_mb`.

    Raises:
        UsageError: Over a cap (named, with its keepui.toml key), not UTF-8, or binary.
    """
    settings = load_settings(store, create=False)
    source = stream if stream is not None else sys.stdin.buffer
    cap = settings.max_file_mb * MB
    chunks: list[bytes] = []
    size = 0
    while chunk := source.read(CHUNK):
        size += len(chunk)
        if size > cap:
            raise UsageError(
                f"standard input is over the {settings.max_file_mb:g} MB cap on what a put "
                "reads; raise `[ingest] max_file_mb` in keepui.toml, or split the input."
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    if b"\x00" in data:
        raise UsageError("standard input holds NUL bytes: binary data, not text; give text.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start]
        raise UsageError(
            f"standard input is not UTF-8 (byte 0x{bad:02X} at offset {exc.start}: "
            f"{exc.reason}); convert it first (e.g. iconv -f latin1 -t utf-8), or put it as "
            "a file, which keepui decodes from legacy encodings too."
        ) from None
    if len(text) > settings.max_text_mb * MB:
        raise UsageError(
            f"standard input is {len(text) / MB:.1f} MB of text, over the "
            f"{settings.max_text_mb:g} MB cap on one document's text; raise "
            "`[ingest] max_text_mb` in keepui.toml, or split the input."
        )
    return text


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
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files  {task.fields[rate]} files/s"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with (
        Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar,
        open_workbench(store) as wb,
    ):
        task = bar.add_task("putting", total=None, rate="–")
        if console.is_terminal:  # "loading the embedding model…" in the bar, not across it
            notices.reporter = BarReporter(bar)

        def tick(done: int, total: int, current: str) -> None:
            elapsed = bar.tasks[0].elapsed or 0.0
            rate = f"{done / elapsed:.1f}" if elapsed > 0 else "–"
            bar.update(task, completed=done, total=total, rate=rate)

        try:
            report = wb.ingest([source], tags=tags, exclude=exclude, progress=tick)
        except Interrupted as exc:
            if not json_:  # the ids stored before the interrupt, as they would have been
                for doc_id in exc.stored:
                    out(doc_id)
            raise
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
