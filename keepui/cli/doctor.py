"""`keepui doctor [--repair] [--json]`: check every file of a store, and repair what can be
rebuilt."""

from __future__ import annotations

from typing import Annotated

import typer

from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note, out
from keepui_engine import open_workbench

RepairFlag = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Rebuild what is damaged and can be rebuilt (the indexes, from the database).",
    ),
]
MARKS = {"ok": "ok      ", "damaged": "DAMAGED ", "repaired": "repaired"}


def doctor(store: StoreOpt = None, repair: RepairFlag = False, json_: JsonFlag = False) -> None:
    """Check the store's database and index files (on PostgreSQL, its derived tables).

    Every check is ok, damaged or repaired. The indexes (vector files, word index) are derived
    from the database and can be rebuilt with --repair; a damaged database cannot: restore it
    from a backup. Exit code 0 when the store is healthy (or was repaired), 2 while damage
    remains.

    \b
    Examples:
      keepui doctor
      keepui doctor --repair
      keepui doctor --json | jq '.checks[] | select(.status != "ok")'
    """
    with open_workbench(store, create=False) as wb:
        report = wb.doctor(repair=repair)
    if json_:
        emit_json(report.to_dict())
    else:
        for check in report.checks:
            out(f"{MARKS.get(check.status, check.status)}  {check.name}: {check.detail}")
        hints = sorted({c.hint for c in report.checks if c.status == "damaged" and c.hint})
        for hint in hints:
            note(f"to fix: {hint}")
        if report.healthy:
            note("the store is healthy" + (" (repaired)" if repair else ""))
    if not report.healthy:
        raise typer.Exit(2)
