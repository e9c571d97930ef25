"""Export and import as JSONL, through the Workbench facade (so also through `keepui serve`).

The format is in `records`; what the store's owner does is in `exporting` and `importing`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import Interrupted, UsageError
from keepui_engine.core.types import _Serialisable
from keepui_engine.transfer.records import dumps, parse, wire

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench

EXPORT_PAGE = 256
IMPORT_BATCH = 256
MODES = ("merge", "replace")
SHOWN_BAD = 20


@dataclass(frozen=True)
class ImportReport(_Serialisable):
    """What an import did.

    Attributes:
        items: Items in the file (bad lines not counted).
        counts: action -> how many (`created`, `replaced`, `merged`, `unchanged`).
        bad: Lines skipped with `--skip-bad`: {"line", "error"} (the first 20).
        bad_count: How many lines were skipped.
        model: The embedding model the file names (None without a header).
        reembed: Whether its vectors were of another model (items re-embed on the queue).
        ids: {"id", "action"} of each item, in file order.
    """

    items: int
    counts: dict[str, int]
    bad: list[dict[str, Any]] = field(default_factory=list)
    bad_count: int = 0
    model: str | None = None
    reembed: bool = False
    ids: list[dict[str, Any]] = field(default_factory=list)


def export(
    wb: Workbench,
    write: Callable[[str], object],
    include: dict[str, bool],
    progress: Callable[[int, int], None] | None,
) -> int:
    """See `Workbench.export`."""
    with wb.session():
        header = wb.call("export_header", include=include)
        write(dumps(header) + "\n")
        total, done, after = int(header["items"]), 0, None
        while True:
            page = wb.call("export_page", after=after, limit=EXPORT_PAGE, include=include)
            if not page:
                break
            for record in page:
                write(dumps(record) + "\n")
            done += len(page)
            after = page[-1]["id"]
            if progress is not None:
                progress(done, total)
    return done


def import_lines(
    wb: Workbench,
    lines: Iterable[str],
    mode: str,
    skip_bad: bool,
    progress: Callable[[str, int, int], None] | None,
) -> ImportReport:
    """See `Workbench.import_lines`."""
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose merge or replace.")
    if skip_bad and mode != "merge":
        raise UsageError("--skip-bad goes with --mode merge (replace applies a file whole or not).")
    reading = None if progress is None else (lambda n: progress("checking", n, 0))
    header, items, bad = parse(lines, now=datetime.now(UTC).replace(tzinfo=None), on_line=reading)
    if bad and not skip_bad:
        first = str(bad[0]).rstrip(".")
        more = f" (and {len(bad) - 1} more bad line(s))" if len(bad) > 1 else ""
        raise UsageError(
            f"{first}{more}; nothing was imported. Fix the line, or import the good lines with "
            "--mode merge --skip-bad."
        )
    counts: dict[str, int] = {}
    ids: list[dict[str, Any]] = []
    stored = wb.stats().model if header.model else None
    with wb.session("import_page"):
        try:
            for start in range(0, len(items), IMPORT_BATCH):
                batch = [wire(item) for _, item in items[start : start + IMPORT_BATCH]]
                done = wb.call(
                    "import_page",
                    items=batch,
                    mode=mode,
                    model=header.model,
                    dim=header.dim,
                    last=start + IMPORT_BATCH >= len(items),
                )
                for result in done:
                    action = str(result["action"]).split(" ")[0]
                    counts[action] = counts.get(action, 0) + 1
                ids += done
                if progress is not None:
                    progress("importing", min(start + IMPORT_BATCH, len(items)), len(items))
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted: {len(ids)} of {len(items)} item(s) imported",
                hint="run the same command again to continue: items already imported are unchanged",
                stored=[str(r["id"]) for r in ids if "id" in r],
            ) from None
        for key, verb in header.links.items():  # link tags whose .tag doc the file left out
            doc_id = f".tag/{key}"
            listed = wb.list_items(doc_id, sort="id", limit=1000)  # get would touch `accessed`
            if not any(i.id == doc_id for i in listed):
                wb.put(f"_inverse: {verb}\n", id=doc_id, source="import")
    return ImportReport(
        len(items),
        counts,
        [{"line": b.line, "error": b.problem} for b in bad[:SHOWN_BAD]],
        len(bad),
        header.model,
        bool(header.model and stored and header.model != stored),
        ids,
    )
