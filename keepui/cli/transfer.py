"""`keepui export` and `keepui import`: the whole store as JSONL, and back."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note
from keepui_engine import NotFound, UsageError, open_workbench


@contextmanager
def _bar(label: str) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal; `update(done, total)`."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, what: str | None = None) -> None:
            if what is not None:
                bar.update(task, description=what)
            bar.update(task, completed=done, total=total or None)

        yield update


def export(
    file: Annotated[
        str, typer.Argument(help="Where to write the JSONL; - for standard output.")
    ] = "-",
    include_versions: Annotated[
        bool, typer.Option("--include-versions", help="Every archived version too.")
    ] = False,
    include_parts: Annotated[
        bool, typer.Option("--include-parts", help="The parts of long documents.")
    ] = False,
    include_system: Annotated[
        bool, typer.Option("--include-system", help="System documents (ids starting with .).")
    ] = False,
    with_vectors: Annotated[
        bool, typer.Option("--with-vectors", help="The embedding vectors (base64 float32).")
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Write the store as JSONL: a header line (format, model), then one item a line.

    Items come in id order with their text, summary, tags and times, and nothing of the
    export's own making (no export time), so exporting the same store twice gives the same
    bytes. `keepui import` reads it back.

    \b
    Examples:
      keepui export backup.jsonl --include-versions --include-parts
      keepui export - | gzip > store.jsonl.gz
    """
    if json_ and file == "-":
        raise UsageError("--json reports on an export to a FILE; with - the JSONL is the output.")
    with open_workbench(store, create=False) as wb, _bar("exporting") as update:
        options = {
            "versions": include_versions,
            "parts": include_parts,
            "system": include_system,
            "vectors": with_vectors,
        }
        if file == "-":
            count = wb.export(sys.stdout.write, **options, progress=update)
            sys.stdout.flush()
        else:
            target = Path(file)
            tmp = target.with_name(target.name + ".partial")
            try:
                with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                    count = wb.export(fh.write, **options, progress=update)
                os.replace(tmp, target)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise UsageError(f"cannot write {file}: {exc.strerror or exc}") from exc
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
    if json_:
        emit_json({"file": file, "items": count})
    note(f"exported {count} item(s)" + (f" to {file}" if file != "-" else ""))


def import_(
    file: Annotated[str, typer.Argument(help="A keepui export (or JSONL of notes); - for stdin.")],
    mode: Annotated[
        str,
        typer.Option(
            "--mode", help="merge: new ids added, changed ones a new version; replace: overwrite."
        ),
    ] = "merge",
    skip_bad: Annotated[
        bool,
        typer.Option("--skip-bad", help="With --mode merge: import the good lines, skip bad ones."),
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Read a keepui export (or JSONL lines of {"text", "id", "tags"}) into the store.

    Every line is checked before anything is written: a bad line stops the import naming its
    number, unless --mode merge --skip-bad. replace: an item whose id exists is replaced,
    history and all; merge (default): it gets the file's text and tags as a new version. A
    file made with another embedding model re-embeds on the queue (keepui pending).

    \b
    Examples:
      keepui import backup.jsonl --store ~/new-store
      keepui export --store a | keepui import - --store b
    """
    if file == "-":
        lines: Any = sys.stdin
    else:
        path = Path(file)
        if not path.is_file():
            raise NotFound(f"no such file: {file}", hint="give the path of a JSONL export")
        lines = open(path, encoding="utf-8", errors="strict")  # noqa: SIM115 - closed below
    try:
        with open_workbench(store) as wb, _bar("checking") as update:
            report = wb.import_lines(
                lines,
                mode=mode,
                skip_bad=skip_bad,
                progress=lambda what, done, total: update(done, total, what),
            )
    except UnicodeDecodeError as exc:
        raise UsageError(f"{file} is not UTF-8 text ({exc.reason}); nothing was imported.") from exc
    finally:
        if lines is not sys.stdin:
            lines.close()
    if json_:
        emit_json(report.to_dict())
    counts = ", ".join(f"{n} {action}" for action, n in sorted(report.counts.items()))
    note(f"imported {report.items} item(s): {counts or 'nothing to do'}")
    for bad in report.bad:
        note(f"  skipped line {bad['line']}: {bad['error']}")
    if report.bad_count > len(report.bad):
        note(f"  … and {report.bad_count - len(report.bad)} more bad line(s)")
    if report.reembed:
        note(f"the file's vectors are of {report.model}: items re-embed on the queue")
